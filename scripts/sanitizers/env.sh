# Sourced before running a sanitizer build (`make test-asan` does): stop at the first report, with
# a stack trace, reading the suppression files beside this one. By hand, from the repository root:
#   MINRNN_SAN_DIR=$PWD/scripts/sanitizers . scripts/sanitizers/env.sh
_san_dir="${MINRNN_SAN_DIR:?set MINRNN_SAN_DIR to the folder holding this file}"
# max_allocation_size_mb: one allocation over 2 GiB is a bug here (the fuzz targets rely on it).
export ASAN_OPTIONS="abort_on_error=1:halt_on_error=1:detect_leaks=1:check_initialization_order=1:max_allocation_size_mb=2048:allocator_may_return_null=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:suppressions=$_san_dir/ubsan.supp"
export LSAN_OPTIONS="suppressions=$_san_dir/lsan.supp:print_suppressions=0"
unset _san_dir
