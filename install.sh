#!/bin/sh
# Install ThoughtGate, a single binary, for the current user:
#
#   curl -fsSL https://github.com/thoughtgate/thoughtgate/releases/latest/download/install.sh | sh
#   curl -fsSL .../install.sh | sh -s -- --version 0.1.0 --modify-path
#
# Options:
#   --version X     install release X (default: the latest release); also how to up- or downgrade
#   --uninstall     remove the installed binary (with --modify-path: also the PATH line this script added)
#   --modify-path   add the install directory to your shell profile. Without it no profile is touched:
#                   the script prints the line to add instead
#   -h, --help
#
# Environment:
#   THOUGHTGATE_INSTALL_DIR    where the binary goes (default ~/.local/bin). The script never calls sudo.
#   THOUGHTGATE_DOWNLOAD_BASE  URL of a directory holding one release's archives and SHA256SUMS (a mirror,
#                              or tests). With --version, the downloaded binary must report that version.
#   THOUGHTGATE_TEST_UNAME_S, THOUGHTGATE_TEST_UNAME_M
#                              stand in for `uname -s` / `uname -m`; for testing the unsupported-platform
#                              refusal only
#
# What it checks: the platform is one a release ships (Linux or macOS, x86_64 or arm64, glibc on Linux),
# never guessing otherwise; the archive's SHA-256 matches SHA256SUMS; the binary runs here. Any failure
# leaves the install directory untouched.
set -eu

RELEASES_URL="https://github.com/thoughtgate/thoughtgate/releases"
PROFILE_MARKER="# added by the thoughtgate installer"

info() { printf '%s\n' "$*"; }
die() {
  printf 'thoughtgate install: error: %s\n' "$*" >&2
  exit 1
}
usage() {
  cat <<'EOF_USAGE'
usage: install.sh [--version X] [--modify-path]
       install.sh --uninstall [--modify-path]
  --version X     install release X (default: the latest); also how to up- or downgrade
  --uninstall     remove the installed binary
  --modify-path   add (or with --uninstall remove) the install directory in your shell profile
environment: THOUGHTGATE_INSTALL_DIR (default ~/.local/bin), THOUGHTGATE_DOWNLOAD_BASE (a mirror)
EOF_USAGE
}

# --- shell profiles (touched only with --modify-path) -------------------------------------------
profile_for_shell() {
  case $(basename "${SHELL:-sh}") in
    zsh) printf '%s\n' "${ZDOTDIR:-$HOME}/.zshrc" ;;
    bash)
      # Terminal.app starts login shells, which read .bash_profile and not .bashrc.
      if [ "$(uname -s)" = Darwin ]; then printf '%s\n' "$HOME/.bash_profile"; else printf '%s\n' "$HOME/.bashrc"; fi
      ;;
    fish) printf '%s\n' "${XDG_CONFIG_HOME:-$HOME/.config}/fish/config.fish" ;;
    *) printf '%s\n' "$HOME/.profile" ;;
  esac
}

# shellcheck disable=SC2016 # the $PATH in the line is for the profile to expand, not us
path_line() {
  case $1 in
    */config.fish) printf 'fish_add_path "%s" %s\n' "$install_dir" "$PROFILE_MARKER" ;;
    *) printf 'export PATH="%s:$PATH" %s\n' "$install_dir" "$PROFILE_MARKER" ;;
  esac
}

all_profiles() {
  for candidate in "${ZDOTDIR:-${HOME:-/nonexistent}}/.zshrc" "${HOME:-/nonexistent}/.bashrc" "${HOME:-/nonexistent}/.bash_profile" \
    "${HOME:-/nonexistent}/.profile" "${XDG_CONFIG_HOME:-${HOME:-/nonexistent}/.config}/fish/config.fish"; do
    if [ -f "$candidate" ] && grep -qF "$PROFILE_MARKER" "$candidate"; then printf '%s\n' "$candidate"; fi
  done
}

on_path() {
  case ":${PATH:-}:" in
    *":$install_dir:"*) return 0 ;;
    *) return 1 ;;
  esac
}

add_to_profile() {
  case $install_dir in
    *[\"\$\`\\]*) die "--modify-path: $install_dir contains a quote, \$, backtick or backslash; add it to PATH yourself" ;;
  esac
  profile=$(profile_for_shell)
  if [ -f "$profile" ] && grep -qxF "$(path_line "$profile")" "$profile"; then
    info "$profile already adds $install_dir to PATH"
    return
  fi
  mkdir -p "$(dirname "$profile")"
  printf '\n%s' "$(path_line "$profile")" >>"$profile"
  printf '\n' >>"$profile"
  info "added $install_dir to PATH in $profile (open a new shell, or: . \"$profile\")"
}

remove_from_profiles() {
  all_profiles | while IFS= read -r profile; do
    # Rewrite in place (not rename) so the file keeps its owner, mode and any symlink.
    kept=$(grep -vF "$PROFILE_MARKER" "$profile" || true)
    printf '%s\n' "$kept" >"$profile"
    info "removed the PATH line this installer added to $profile"
  done
}

# Everything runs from main, called on the last line: if `curl | sh` is cut off mid-download, sh has
# only read definitions and does nothing.
main() {
  # --- arguments --------------------------------------------------------------------------------
  version=""
  action=install
  modify_path=0
  while [ $# -gt 0 ]; do
    case $1 in
      --version)
        [ $# -ge 2 ] || die "--version needs a value, e.g. --version 0.1.0"
        version=$2
        shift 2
        ;;
      --version=*) version=${1#--version=}; shift ;;
      --uninstall) action=uninstall; shift ;;
      --modify-path) modify_path=1; shift ;;
      -h | --help) usage; exit 0 ;;
      *) die "unknown option: $1 (see --help)" ;;
    esac
  done
  version=${version#v}
  case $version in
    *[!0-9A-Za-z.+-]*) die "not a version: $version" ;;
  esac

  if [ -n "${THOUGHTGATE_INSTALL_DIR:-}" ]; then
    install_dir=$THOUGHTGATE_INSTALL_DIR
  else
    [ -n "${HOME:-}" ] || die "HOME is not set: set THOUGHTGATE_INSTALL_DIR to choose where to install"
    install_dir=$HOME/.local/bin
  fi
  install_dir=${install_dir%/}
  binary=$install_dir/thoughtgate

  # --- uninstall ----------------------------------------------------------------------------------
  if [ "$action" = uninstall ]; then
    if [ -e "$binary" ]; then
      rm -f "$binary"
      info "removed $binary"
    else
      info "no thoughtgate at $binary: nothing to remove"
    fi
    if [ "$modify_path" = 1 ]; then
      remove_from_profiles
    else
      all_profiles | while IFS= read -r profile; do
        info "$profile still adds a directory to PATH: delete the line ending in \"$PROFILE_MARKER\", or rerun with --uninstall --modify-path"
      done
    fi
    state_dir=${XDG_STATE_HOME:-${HOME:-/nonexistent}/.local/state}/thoughtgate
    config_dir=${XDG_CONFIG_HOME:-${HOME:-/nonexistent}/.config}/thoughtgate
    if [ -f "$state_dir/journal.json" ]; then
      info "warning: $state_dir/journal.json exists: an agent config may still point at thoughtgate (a wrap did not finish)"
    fi
    for dir in "$config_dir" "$state_dir"; do
      if [ -d "$dir" ]; then info "left $dir in place (rm -rf \"$dir\" to remove it)"; fi
    done
    other=$(command -v thoughtgate 2>/dev/null || true)
    if [ -n "$other" ] && [ "$other" != "$binary" ]; then
      info "another thoughtgate is still on PATH: $other (installed with Homebrew? brew uninstall thoughtgate)"
    fi
    exit 0
  fi

  # --- platform -----------------------------------------------------------------------------------
  uname_s=${THOUGHTGATE_TEST_UNAME_S:-$(uname -s)}
  uname_m=${THOUGHTGATE_TEST_UNAME_M:-$(uname -m)}
  case $uname_s in
    Linux) os=linux ;;
    Darwin) os=darwin ;;
    *) die "unsupported operating system: $uname_s (releases exist for Linux and macOS)" ;;
  esac
  case $uname_m in
    x86_64 | amd64) arch=x64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) die "unsupported architecture: $uname_m on $uname_s (releases exist for x86_64 and arm64)" ;;
  esac

  if [ "$os" = darwin ] && [ "$arch" = x64 ]; then
    # A shell running under Rosetta 2 reports x86_64 on Apple silicon; the native build is the right one.
    if [ "$(sysctl -n sysctl.proc_translated 2>/dev/null || true)" = 1 ]; then
      arch=arm64
      info "Rosetta 2 detected: installing the native arm64 build"
    fi
  fi

  if [ "$os" = linux ]; then
    case $arch in
      x64) loader=/lib64/ld-linux-x86-64.so.2 ;;
      arm64) loader=/lib/ld-linux-aarch64.so.1 ;;
    esac
    if [ -f /etc/alpine-release ] || { ldd --version 2>&1 || true; } | grep -qi musl; then
      die "this system uses musl libc (Alpine?); ThoughtGate's Linux builds need glibc: use a glibc-based distribution or container (e.g. debian:bookworm-slim)"
    fi
    [ -e "$loader" ] || die "glibc's dynamic loader $loader is missing; ThoughtGate's Linux builds need glibc"
  fi

  variant=""
  if [ "$arch" = x64 ]; then
    # Bun's default x64 build uses AVX2; older CPUs (and some VMs) need the baseline build.
    case $os in
      linux) grep -qw avx2 /proc/cpuinfo 2>/dev/null || variant=-baseline ;;
      darwin) sysctl -n machdep.cpu.leaf7_features 2>/dev/null | grep -qi avx2 || variant=-baseline ;;
    esac
  fi
  asset=thoughtgate-$os-$arch$variant.tar.gz

  # --- tools --------------------------------------------------------------------------------------
  if command -v curl >/dev/null 2>&1; then
    download() { curl --fail --silent --show-error --location --retry 2 --output "$2" "$1"; }
  elif command -v wget >/dev/null 2>&1; then
    download() { wget --quiet --output-document="$2" "$1"; }
  else
    die "need curl or wget to download"
  fi
  if command -v sha256sum >/dev/null 2>&1; then
    sha256_of() { sha256sum "$1" | cut -d ' ' -f 1; }
  elif command -v shasum >/dev/null 2>&1; then
    sha256_of() { shasum -a 256 "$1" | cut -d ' ' -f 1; }
  else
    die "need sha256sum or shasum to verify the download (refusing to install unverified)"
  fi
  command -v tar >/dev/null 2>&1 || die "need tar to unpack the download"

  # --- download and verify ------------------------------------------------------------------------
  if [ -n "${THOUGHTGATE_DOWNLOAD_BASE:-}" ]; then
    base=${THOUGHTGATE_DOWNLOAD_BASE%/}
  elif [ -n "$version" ]; then
    base=$RELEASES_URL/download/v$version
  else
    base=$RELEASES_URL/latest/download
  fi

  tmp=$(mktemp -d 2>/dev/null || mktemp -d -t thoughtgate)
  staged=""
  trap 'rm -rf "$tmp"; [ -z "$staged" ] || rm -f "$staged"' EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM

  info "downloading $base/$asset"
  download "$base/$asset" "$tmp/$asset" || die "could not download $base/$asset"
  download "$base/SHA256SUMS" "$tmp/SHA256SUMS" || die "could not download $base/SHA256SUMS"

  expected=$(awk -v f="$asset" '$2 == f || $2 == "*" f { print $1; exit }' "$tmp/SHA256SUMS")
  case $expected in
    "" ) die "SHA256SUMS at $base has no entry for $asset" ;;
    *[!0-9a-f]*) die "SHA256SUMS at $base has a malformed entry for $asset" ;;
  esac
  [ ${#expected} -eq 64 ] || die "SHA256SUMS at $base has a malformed entry for $asset"
  actual=$(sha256_of "$tmp/$asset")
  if [ "$actual" != "$expected" ]; then
    die "checksum mismatch for $asset: SHA256SUMS says $expected, the download is $actual; nothing was installed"
  fi
  info "verified sha256 $actual"

  mkdir "$tmp/unpacked"
  tar -xzf "$tmp/$asset" -C "$tmp/unpacked" thoughtgate || die "could not unpack $asset"
  [ -f "$tmp/unpacked/thoughtgate" ] || die "$asset holds no thoughtgate binary"
  chmod 755 "$tmp/unpacked/thoughtgate"

  # Run it before it replaces anything: a binary that cannot start here must not be installed.
  reported=$("$tmp/unpacked/thoughtgate" --version 2>&1) || die "the downloaded binary does not run on this machine: $reported"
  if [ -n "$version" ]; then
    case $reported in
      "thoughtgate $version "*) ;;
      *) die "asked for $version but the download reports \"$reported\"; nothing was installed" ;;
    esac
  fi

  # --- install ------------------------------------------------------------------------------------
  mkdir -p "$install_dir" 2>/dev/null || die "cannot create $install_dir: set THOUGHTGATE_INSTALL_DIR to a directory you can write"
  [ -w "$install_dir" ] || die "cannot write to $install_dir: set THOUGHTGATE_INSTALL_DIR to a directory you can write (this script never uses sudo)"
  previous=""
  if [ -x "$binary" ]; then previous=$("$binary" --version 2>/dev/null || true); fi
  # Copy next to the target, then rename: running shims keep the old file, new starts get the new one.
  staged=$install_dir/.thoughtgate.new.$$
  cp "$tmp/unpacked/thoughtgate" "$staged"
  chmod 755 "$staged"
  mv -f "$staged" "$binary"
  staged=""
  if [ -n "$previous" ]; then
    info "replaced $previous with $reported at $binary"
  else
    info "installed $reported to $binary"
  fi

  if [ "$modify_path" = 1 ]; then
    if on_path; then info "$install_dir is already on PATH"; else add_to_profile; fi
  elif ! on_path; then
    info ""
    info "$install_dir is not on your PATH. Add it with:"
    info "  export PATH=\"$install_dir:\$PATH\""
    info "to your shell profile ($(profile_for_shell)), or rerun this installer with --modify-path."
  fi
  other=$(command -v thoughtgate 2>/dev/null || true)
  if [ -n "$other" ] && [ "$other" != "$binary" ]; then
    info "note: $other comes first on PATH and will run instead of $binary"
  fi
  info "check the install with: thoughtgate doctor"
}

main "$@"
