# The Debian mirror this machine's apt uses for PATH (/debian, /debian-security),
# else Debian's own: sourced by tests/roots/mkroot.sh and tests/kernels/kernel.sh,
# which fetch other suites' packages from where the host's apt does.
#   mirror PATH
mirror() {
	local m
	m=$(sed -n "s|^URIs: *\(http[^ ]*$1\)/*$|\1|p" /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1)
	[ -n "$m" ] || m=$(awk -v s="$1" '$1 == "deb" && $2 ~ s"/?$" { print $2; exit }' /etc/apt/sources.list 2>/dev/null)
	echo "${m:-http://deb.debian.org$1}"
}
