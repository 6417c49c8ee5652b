#!/bin/sh
# Spillway's CLAUDE_CODE_SHELL_PREFIX (docs/adapters.md). Claude Code, after its
# permission check on the command as typed, runs each Bash command as
#   <this file> -s "$0" NODE '<generated shell string>'
# ("$0" is the shell Claude Code chose: its outer `bash -c` expands it).
# The string runs unchanged in that shell, its stdout and stderr still Claude
# Code's own output file: live, in order, background tasks' files filling as
# they run. Only when that file ends larger than the threshold does Node start,
# once, to keep the whole output in Spillway's store and put a digest in its
# place. The exit status is the command's, so Claude Code frames it as before.
shell_=bash
node_=
if [ "$#" -ge 4 ] && [ "$1" = -s ]; then
  shell_=$2
  node_=$3
  shift 3
fi
if [ "$#" -ne 1 ]; then
  echo "spillway: usage: $0 -s SHELL NODE COMMAND_STRING" >&2
  exit 2
fi

# Claude Code's outer shell counted itself in SHLVL already; the shell below
# stands in for it and would count once more. Unless the outer shell exec'd
# this script as its last command (then the parent is Claude Code, not that
# shell): bash gives its level back before such an exec.
parent_=
[ -r "/proc/$PPID/comm" ] && read -r parent_ <"/proc/$PPID/comm"
case ${SHLVL-} in '' | *[!0-9]*) ;; *)
  if [ -z "$parent_" ] || [ "$parent_" = "${shell_##*/}" ]; then
    [ "$SHLVL" -gt 0 ] && SHLVL=$((SHLVL - 1)) && export SHLVL
  fi ;;
esac

# A prefix the user had before Spillway's, run as Claude Code would run it:
# split at its last " -", the part before as one word, the part after as shell text.
# The command's shell is exec'd from a subshell that alone takes back the real
# stderr (fd 3 here): this shell's own stays /dev/null while it waits, so its
# notice about a shell that a signal ended ("Killed") stays out of the output.
chained_=${SPILLWAY_CHAINED_SHELL_PREFIX-}
exec 3>&2 2>/dev/null
case $chained_ in
  '') (exec "$shell_" -c "$1" 2>&3 3>&-) ;;
  ?*" -"*)
    head_=${chained_% -*}
    tail_=${chained_#"$head_" }
    (eval "exec \"\$head_\" $tail_ \"\$1\" 2>&3 3>&-") ;;
  *) (exec "$chained_" "$1" 2>&3 3>&-) ;;
esac
status_=$?
exec 2>&3 3>&-

# Claude Code hands its output file to the shell as stdout and stderr (Linux:
# readable again through /proc). Anything else (a pipe, another system) is left
# as it is. Its size without starting a program: every write to a file opened
# for appending leaves the writer's offset at the end, so the larger offset of
# the two descriptors (shared with the command's shell) is the file's size.
out_=/proc/$$/fd/1
limit_=${SPILLWAY_MAX_INLINE_BYTES:-4096}
case $limit_ in '' | *[!0-9]*) limit_=4096 ;; esac
if [ -n "$node_" ] && [ -f "$out_" ] && [ -r "$out_" ]; then
  size_=0
  for fd_ in 1 2; do
    [ -r "/proc/$$/fdinfo/$fd_" ] || continue
    while read -r key_ value_; do
      case $key_:$value_ in pos::*[!0-9]* | pos::) ;; pos::*) [ "$value_" -gt "$size_" ] && size_=$value_ ;; esac
    done <"/proc/$$/fdinfo/$fd_"
  done
  if [ "$size_" -gt "$limit_" ]; then
    "$node_" "${0%/*}/hook.js" claude-code prefix-finish "$status_" "$1" 2>/dev/null
  fi
fi
exit "$status_"
