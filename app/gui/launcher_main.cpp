// attnscope: starts the desktop app (attnscope-gui beside it) with OMP_WAIT_POLICY set.

#include "common/exec_beside.h"

int main(int, char** argv) { return attnscope::app::execBeside("attnscope-gui", argv, "attnscope"); }
