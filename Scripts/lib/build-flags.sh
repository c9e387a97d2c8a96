# Sourced by Scripts/test and Scripts/sanitize: compiler flags for a debug build that is made
# from scratch and run, not debugged (CI's build, the sanitizer packages).
#
# - Whole-module compilation at -Onone type-checks each file once per module, where batch mode
#   has every batch re-read the declarations of the files it does not compile: the same build
#   takes about 40 % less CPU (measured on this package: debug build 341 -> 197 core-seconds,
#   AddressSanitizer 290 -> 167, ThreadSanitizer 204 -> 115). Incremental rebuilds lose,
#   which is why a developer's own `swift build` keeps the default.
# - One thread per module still writes an object file per source file, which the link step
#   (autolink-extract) and the index store (test discovery on Linux needs it) expect; plain
#   -wmo writes one and fails there.
# - Line tables are all a sanitizer report or a crash backtrace needs for file and line.
# - -disable-batch-mode answers the package manager's -enable-batch-mode, which whole-module
#   ignores with a warning per module.
once_build_flags=(
  -Xswiftc -wmo -Xswiftc -num-threads -Xswiftc 1 -Xswiftc -gline-tables-only
  -Xswiftc -disable-batch-mode
)
