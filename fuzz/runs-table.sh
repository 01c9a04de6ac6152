#!/bin/sh
# fuzz/runs-table.sh [RUNS_FILE] - the table of docs/fuzzing.md's campaign from fuzz/runs.txt: per
# target, the executions of every run added up, how many runs, the exec/s and start of the last run,
# and the commits the runs were built from (a "+" marks a tree with changes to the targets' code).
awk '
	function th(x,  s) {
		s = sprintf("%d", x)
		while (s ~ /[0-9][0-9][0-9][0-9]/) sub(/[0-9][0-9][0-9]($|,)/, ",&", s)
		return s
	}
	/^#/ || NF < 8 { next }
	{
		n = $3
		if (!(n in total)) order[++k] = n
		total[n] += $4; runs[n]++; secs[n] += $6
		rate[n] = $5; last[n] = $1
		if (index(" " commits[n] " ", " " $2 " ") == 0) commits[n] = commits[n] (commits[n] ? " " : "") $2
	}
	END {
		print "| target | executions | runs | time (s) | exec/s (last run) | last run started (UTC) | commits |"
		print "|---|---:|---:|---:|---:|---|---|"
		for (i = 1; i <= k; i++) {
			n = order[i]
			printf "| %s | %s | %d | %s | %s | %s | %s |\n", n, th(total[n]), runs[n], th(secs[n]), th(rate[n]), last[n], commits[n]
		}
	}' "${1:-fuzz/runs.txt}"
