# Sourced by scripts/setup.sh and scripts/setup_tests.sh: install what is missing, one package at
# a time, and say what an install that failed leaves out.
#
#   setup_have CMD          whether CMD is on the PATH
#   setup_apt PKG WHAT      install Debian's PKG (WHAT: what needs it, for the message); returns 1
#                           when it could not be installed
#   setup_pip SPEC WHAT     the same with `python3 -m pip install SPEC`
#   setup_missing WHAT      an optional tool could not be installed: say so; fatal under CI=true
#
# apt-get's package lists are refreshed once, before the first install. Nothing is installed
# twice, and nothing is installed that is already there: the callers ask before they install.

setup_have() {
  command -v "$1" >/dev/null 2>&1
}

setup_sudo() {
  if [ "$(id -u)" -ne 0 ]; then
    echo "sudo"
  fi
}

setup_apt_updated=""
setup_apt() {
  local package="$1" what="$2" sudo
  if ! setup_have apt-get; then
    echo "setup: $package is missing ($what needs it) and there is no apt-get to install it with" >&2
    return 1
  fi
  sudo="$(setup_sudo)"
  echo "setup: installing $package ($what needs it)…" >&2
  if [ -z "$setup_apt_updated" ]; then
    $sudo apt-get update -qq >/dev/null 2>&1 || true
    setup_apt_updated=1
  fi
  if ! DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$package" >/dev/null; then
    echo "setup: could not install $package with apt-get" >&2
    return 1
  fi
}

setup_pip() {
  local spec="$1" what="$2"
  echo "setup: installing $spec ($what needs it)…" >&2
  if ! python3 -m pip install --quiet "$spec"; then
    echo "setup: could not install $spec with pip" >&2
    return 1
  fi
}

setup_missing() {
  if [ "${CI:-}" = "true" ]; then
    echo "setup: $1 cannot run without it, and CI=true runs every test: stopping" >&2
    exit 1
  fi
  echo "setup: $1 will be skipped" >&2
}
