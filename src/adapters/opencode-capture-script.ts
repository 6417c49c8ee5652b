// The BASH_ENV script through which the opencode plugin captures a bash tool
// call's whole output at the source. opencode runs each call as `<shell> -c
// <command>` with the environment the plugin's `shell.env` hook adds to, so
// bash reads this file before the command, as typed, runs: the command text
// (what opencode's permission rules judged and what the model sees) is never
// changed. The script sends stdout and stderr, in order, through `tee` into the
// capture file and on to opencode as before, and on exit waits (briefly) for
// tee to hand opencode the last bytes, so opencode's own view loses nothing.
// Tee ignores SIGPIPE: when opencode stops reading, the file still gets it all.
// It acts once: the variables it reads are unset, so a bash script the
// command starts does not capture again; the user's own BASH_ENV still runs.

/** Set by the plugin to the capture file (created 0600, exclusively, before the shell starts). */
export const CAPTURE_FILE_VAR = 'SPILLWAY_OPENCODE_CAPTURE';
/** The user's own BASH_ENV, which the script sources after setting up the capture. */
export const USER_BASH_ENV_VAR = 'SPILLWAY_OPENCODE_BASH_ENV';
/** Created by the capture's tee step when it has written the last byte. */
export const DONE_SUFFIX = '.done';

/**
 * Tee stays alive while a background job of the command holds the pipe: the
 * exit waits for it at most 2 s (EPOCHREALTIME: bash 5), then leaves it running.
 */
export const CAPTURE_SCRIPT = `# Spillway: capture of an opencode bash tool call (see spillway's docs/adapters.md)
if [ -n "\${${CAPTURE_FILE_VAR}:-}" ]; then
  __spillway_f=\$${CAPTURE_FILE_VAR}
  unset ${CAPTURE_FILE_VAR} BASH_ENV
  if [ -n "\${${USER_BASH_ENV_VAR}:-}" ]; then export BASH_ENV="\$${USER_BASH_ENV_VAR}"; fi
  unset ${USER_BASH_ENV_VAR}
  exec > >(trap '' PIPE; tee -a -- "\$__spillway_f" 2>/dev/null; umask 077; : > "\$__spillway_f${DONE_SUFFIX}") 2>&1
  __spillway_tee=\$!
  trap '__spillway_s=\$?; exec >&- 2>&-; __spillway_end=\$(( \${EPOCHREALTIME/[.,]/} + 2000000 )); while kill -0 "\$__spillway_tee" 2>/dev/null && [ "\${EPOCHREALTIME/[.,]/}" -lt "\$__spillway_end" ]; do sleep 0.01; done; exit "\$__spillway_s"' EXIT
  if [ -n "\${BASH_ENV:-}" ]; then . "\$BASH_ENV"; fi
fi
`;
