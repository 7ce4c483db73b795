#!/usr/bin/env bash
# Builds the test stack's images on a machine that reaches no image registry: a Debian bookworm
# base made with debootstrap, stand-ins for the public images docker/compose.yaml names (same
# ports, variables, volumes and health-check commands) and the backend from docker/Dockerfile as
# users build it, only its base image swapped for the stand-in. Images already present are reused
# (the base by its tag, the rest by Docker's layer cache). Needs root, docker and debootstrap.
#
#   GOLDLOOP_TEST_CA_BUNDLE   CA bundle the containers trust for PyPI (default: this machine's)
#   GOLDLOOP_TEST_DEBIAN      Debian mirror for debootstrap (default: http://deb.debian.org/debian)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
base=goldloop-test/bookworm
ca_bundle="${GOLDLOOP_TEST_CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}"
mirror="${GOLDLOOP_TEST_DEBIAN:-http://deb.debian.org/debian}"
# Where the base image keeps the CA bundle: not /etc/ssl/certs, which Debian's ca-certificates
# package rewrites when an image installs it.
ca_in_image=/usr/local/share/goldloop-test/ca.crt

# One build at a time (CI starts one early, in the background; the test's own then waits for it
# and finds every layer cached).
exec 9>/var/tmp/goldloop-test-images.lock
flock 9

if ! docker image inspect "$base" >/dev/null 2>&1; then
  root="$(mktemp -d /var/tmp/goldloop-bookworm.XXXXXX)"
  trap 'rm -rf "$root"' EXIT
  debootstrap --variant=minbase bookworm "$root" "$mirror" >"$root.log" 2>&1 \
    || { tail -20 "$root.log"; exit 1; }
  rm -f "$root.log"
  # As Debian's own images: services a package installs are not started during a build.
  printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
  chmod 755 "$root/usr/sbin/policy-rc.d"
  rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
  changes=(--change 'CMD ["bash"]')
  if [ -f "$ca_bundle" ]; then
    install -D -m 0644 "$ca_bundle" "$root$ca_in_image"
    changes+=(--change "ENV SSL_CERT_FILE=$ca_in_image" --change "ENV PIP_CERT=$ca_in_image")
  fi
  tar -C "$root" -c . | docker import "${changes[@]}" - "$base" >/dev/null
  rm -rf "$root"
  trap - EXIT
fi

logs="$(mktemp -d)"
trap 'rm -rf "$logs"' EXIT
pids=()
build() {  # build TAG CONTEXT [docker build options...], in the background; its log kept
  local tag="$1" context="$2"
  shift 2
  docker build --quiet --tag "$tag" "$@" "$context" >"$logs/${tag//[\/:]/_}.log" 2>&1 &
  pids+=("$!:$tag")
}
finish() {  # wait for every build started; on a failure, its log and exit 1
  local failed=0 entry
  for entry in "${pids[@]}"; do
    if ! wait "${entry%%:*}"; then
      local tag="${entry#*:}"
      echo "building $tag failed:" >&2
      tail -30 "$logs/${tag//[\/:]/_}.log" >&2
      failed=1
    else
      echo "built ${entry#*:}"
    fi
  done
  pids=()
  [ "$failed" = 0 ] || exit 1
}
# Built side by side: most of the time is downloading packages.
build goldloop-test/python:3.11-bookworm "$here/python"
build goldloop-test/postgres:bookworm "$here/postgres"
build goldloop-test/redis:bookworm "$here/redis"
finish
build goldloop-test/label-studio:1.23.2 "$here/label-studio"
build goldloop-test/backend:latest "$repo" --file "$repo/docker/Dockerfile" \
  --build-arg PYTHON_IMAGE=goldloop-test/python:3.11-bookworm
finish
