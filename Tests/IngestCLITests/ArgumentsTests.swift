import Testing

@testable import IngestCLI

@Suite struct ArgumentsTests {
  private func parse(_ argv: [String]) throws(UsageError) -> Arguments {
    try Arguments(argv, valued: ["--to", "--speed", "--buffer"], flags: ["--json", "--quiet"])
  }

  @Test func valuesSwitchesAndPositionals() throws {
    let arguments = try parse(["in.dump", "--to", "out.ts", "--json", "--speed=max", "extra"])
    #expect(arguments.positionals == ["in.dump", "extra"])
    #expect(arguments["--to"] == "out.ts")
    #expect(arguments["--speed"] == "max")
    #expect(arguments["--buffer"] == nil)
    #expect(arguments.has("--json"))
    #expect(!arguments.has("--quiet"))
  }

  @Test func doubleDashEndsOptions() throws {
    let arguments = try parse(["--", "--to", "-x"])
    #expect(arguments.positionals == ["--to", "-x"])
    #expect(arguments["--to"] == nil)
  }

  @Test func loneDashIsAPositional() throws {
    #expect(try parse(["-"]).positionals == ["-"])
  }

  @Test func laterValueWins() throws {
    #expect(try parse(["--to", "a.ts", "--to=b.ts"])["--to"] == "b.ts")
  }

  @Test(arguments: [
    (["--to"], "--to needs a value"), (["--json=yes"], "--json takes no value"),
    (["--bogus"], "unknown option --bogus"), (["-v"], "unknown option -v"),
    (
      ["--rtmp-audio", "app"],
      "--rtmp-audio was replaced: use --audio app|mic|mix|both (mix is RTMP's default)"
    ),
  ])
  func mistakesAreUsageErrors(argv: [String], message: String) {
    #expect {
      try parse(argv)
    } throws: { error in
      (error as? UsageError)?.description == message
    }
  }

  /// `--speed --to out.ts` forgot the value: `--to` is not taken for it, which would leave
  /// `out.ts` a positional and the message about the wrong thing.
  @Test func anOptionNameIsNotTheValueOfTheOneBefore() {
    #expect {
      try Arguments(
        ["in.dump", "--speed", "--to", "out.ts"], valued: ["--to", "--speed"], flags: [],
        expecting: ["--speed": "realtime, max or a number"])
    } throws: { error in
      (error as? UsageError)?.description == "--speed needs a value: realtime, max or a number"
    }
    #expect {
      try parse(["--to", "--json"])
    } throws: { error in
      (error as? UsageError)?.description == "--to needs a value"
    }
    // A value that only starts with a dash is still a value.
    #expect((try? parse(["--to", "-"]))?["--to"] == "-")
  }

  @Test func anOptionGivenOnceMayNotBeGivenTwice() throws {
    #expect(try parse(["--speed", "max"]).single("--speed") == "max")
    #expect(try parse([]).single("--speed") == nil)
    #expect {
      try parse(["--speed", "max", "--speed=2"]).single("--speed")
    } throws: { error in
      (error as? UsageError)?.description
        == "--speed is given more than once ('max', then '2'); give it once"
    }
  }

  @Test func integerOptionsAreRangeChecked() throws {
    let arguments = try parse(["--buffer", "7"])
    #expect(throws: UsageError.self) { try arguments.int("--buffer", in: 2...5) }
    #expect(try parse(["--buffer", "3"]).int("--buffer", in: 2...5) == 3)
    #expect(try parse([]).int("--buffer", in: 2...5) == nil)
    #expect(throws: UsageError.self) { try parse(["--buffer", "x"]).int("--buffer", in: 2...5) }
  }
}

@Suite struct SuggestionTests {
  /// A mistyped option names the one meant, so the message says what to type instead.
  @Test func aMistypedOptionNamesTheOneMeant() {
    #expect {
      try Arguments(["--sped", "max"], valued: ["--speed", "--to"], flags: ["--json"])
    } throws: { error in
      (error as? UsageError)?.description == "unknown option --sped; did you mean --speed?"
    }
  }

  @Test(arguments: [
    ("replya", "replay"), ("--jsno", "--json"), ("inspect", "inspect"), ("--xyz", nil),
    ("-v", nil),
  ])
  func theClosestWordWithinTwoEdits(typed: String, expected: String?) {
    let known = ["replay", "inspect", "live", "--json", "--to"]
    #expect(Suggestion.closest(to: typed, among: known) == expected)
  }
}
