# sock-lib.sh: sourced by the sock-*.sh tests after lib.sh: the control
# socket's harness (tests/sock-serve), its probe and a project whose
# default tool is bash.
: "${CCW_WORKER:=$WRK}"
export CCW_WORKER
SS="$top_builddir/tests/sock-serve"
P="$srcdir/tests/regress/sock-probe.py"
R=$T_TMP/proj
mkdir -p "$R/.loop"
echo '{"default_tool": "bash"}' >"$R/.loop/config.json"
