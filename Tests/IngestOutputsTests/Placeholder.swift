import Testing
@Test func outputsModuleLinks() { #expect(Bool(true)) }
