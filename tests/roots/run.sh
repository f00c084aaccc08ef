#!/usr/bin/env bash
# Run a command inside a root made by mkroot.sh, with /proc, /dev and /tmp of
# its own mount namespace (nothing stays mounted after it):
#   tests/roots/run.sh ROOT CMD [ARG...]
# The command runs on this kernel in this pid namespace, so the host's
# collector profiles it by the pid it prints ($$ of a shell, say) or pgrep finds.
set -euo pipefail
ROOT=${1:?usage: run.sh ROOT CMD [ARG...]}
shift
[ -f "$ROOT/.complete" ] || { echo "run.sh: $ROOT is not a root made by mkroot.sh" >&2; exit 2; }
exec unshare -m -- sh -c '
	root=$1; shift
	mount -t proc proc "$root/proc"
	mount --rbind /dev "$root/dev"
	mount -t tmpfs tmpfs "$root/tmp"
	exec chroot "$root" "$@"' run.sh "$ROOT" "$@"
