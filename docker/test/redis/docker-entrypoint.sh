#!/bin/sh
# The official image builds Redis with protected mode off (other containers are its clients);
# Debian's keeps it on, so it is turned off here, before the command's own settings.
set -eu
if [ "${1:-}" = redis-server ]; then
  shift
  set -- redis-server --protected-mode no "$@"
fi
exec "$@"
