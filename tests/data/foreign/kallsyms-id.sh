#!/bin/sh
# tests/data/foreign/kallsyms-id.sh - one line naming the running kernel's symbols: its release
# and a hash of /proc/kallsyms without module and BPF symbols (which come and go while it runs).
# The HOST-KERNEL recordings' expected text holds only where this line is the one in kallsyms.id.
LC_ALL=C
export LC_ALL
printf '%s %s\n' "$(uname -r)" "$(grep -v '\[' /proc/kallsyms | sha256sum | cut -c1-16)"
