# Sourced by Scripts/test: runs the integration suites side by side.
#
# The integration tests wait on servers, encoders, decoders and real-time replays far more than
# they compute, and Swift Testing runs at most as many tests at once as the machine has cores.
# So each suite runs in a test process of its own, INGEST_JOBS (default 3) at a time,
# the longest first so that none starts last and alone. A suite keeps its own rules
# (`.serialized` suites still run their tests one by one). Each suite's output goes to
# .build/test-logs/SUITE.log; the failures' lines are printed, and a closing line counts every
# test of every suite.

# Suites that take 20 s or more, longest first (measured with this runner on a fresh clone).
ingest_long_suites=(
  FaultInjectionTests ImpairedPathTests MultiOutputTests ConformanceCaseTests SRTReplayTests
  LiveTests HLSPlayerTests HLSRenditionTests StreamRecordUploadTests LiveHEVCTests HLSIntegrationTests SecretsTests
  WHIPChromiumTests WHIPShapedLinkTests SRTShapedLinkTests EnhancedRTMPTests RTMPReplayTests
  HLSFragmentedMP4IntegrationTests
  MP4RecordingTests
  ProducerInputTests H264OpenGOPTests UploadFaultTests AudioMixTests WHIPIntegrationTests
)

# run_suite SUITE LOGDIR BUNDLE: one suite in its own process; writes LOGDIR/SUITE.log and
# LOGDIR/SUITE.result ("STATUS SECONDS"). The test bundle runs by itself, not through
# `swift test`, which holds the build directory's lock for the whole run and so would make
# the suites wait for each other.
run_suite() {
  local suite=$1 logs=$2 bundle=$3 start status
  start=$(date +%s)
  status=0
  NO_COLOR=1 "$bundle" --testing-library swift-testing --filter "^IntegrationTests\\.$suite/" \
    >"$logs/$suite.log" 2>&1 || status=$?
  echo "$status $(($(date +%s) - start))" >"$logs/$suite.result"
  echo "  $suite: exit $status in $(($(date +%s) - start)) s"
}

# run_integration_suites: every IntegrationTests suite; exit status 0 when all passed.
run_integration_suites() {
  local logs=.build/test-logs jobs=${INGEST_JOBS:-3} suite all=() ordered=() failed=0 bundle
  local passed_tests=0 failed_tests=0 line count
  rm -rf "$logs"
  mkdir -p "$logs"
  bundle="$(swift build --show-bin-path)/BroadcastIngestPackageTests.xctest"
  mapfile -t all < <(swift test list --skip-build 2>/dev/null |
    sed -n 's|^IntegrationTests\.\([A-Za-z0-9_]*\)/.*|\1|p' | sort -u)
  if ((${#all[@]} == 0)); then
    echo "no integration suites found" >&2
    return 1
  fi
  for suite in "${ingest_long_suites[@]}"; do
    [[ " ${all[*]} " == *" $suite "* ]] && ordered+=("$suite")
  done
  for suite in "${all[@]}"; do
    [[ " ${ordered[*]} " == *" $suite "* ]] || ordered+=("$suite")
  done
  echo "integration: ${#ordered[@]} suites, $jobs at a time"
  export -f run_suite
  printf '%s\n' "${ordered[@]}" |
    xargs -P "$jobs" -I{} bash -c 'run_suite "$1" "$2" "$3"' _ {} "$logs" "$bundle"

  for suite in "${ordered[@]}"; do
    read -r status _ <"$logs/$suite.result" || status=1
    # Swift Testing's closing line: "Test run with N tests in M suites passed|failed ...".
    line=$(grep -E 'Test run with [0-9]+ tests? ' "$logs/$suite.log" | tail -1 || true)
    count=$(sed -nE 's/.*Test run with ([0-9]+) tests?.*/\1/p' <<<"$line")
    if [[ $status -eq 0 && $line == *" passed "* ]]; then
      passed_tests=$((passed_tests + count))
    else
      failed=$((failed + 1))
      count=$(grep -cE 'Test [A-Za-z_][A-Za-z0-9_]*\(.* failed after' "$logs/$suite.log" || true)
      failed_tests=$((failed_tests + (count > 0 ? count : 1)))
      echo "---- $suite failed (exit $status); its failures:"
      grep -E 'recorded an issue|failed after|error:|Fatal|crashed' "$logs/$suite.log" | head -40 || true
      echo "---- full log: $logs/$suite.log"
    fi
  done
  echo "integration suites: $((${#ordered[@]} - failed)) passed, $failed failed"
  echo "integration: $passed_tests passed, $failed_tests failed" | tee "$logs/summary.txt"
  ((failed == 0))
}
