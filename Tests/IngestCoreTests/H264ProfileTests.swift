import Testing

@testable import IngestCore

/// `profile-level-id` as WebRTC receivers classify it, and the profiles' order.
@Suite struct H264ProfileTests {
  @Test func profileLevelIDsAreClassifiedAsLibwebrtcDoes() {
    let cases: [(String, H264Profile?)] = [
      ("42e01f", .constrainedBaseline), ("42c01f", .constrainedBaseline),
      ("42001f", nil), ("4d401f", .main), ("4d001f", .main), ("4de01f", .constrainedBaseline),
      ("64001f", .high), ("640c1f", nil), ("6e001f", nil),
    ]
    for (hex, profile) in cases {
      #expect(H264ProfileLevelID(hex: hex)?.profile == profile, "\(hex)")
    }
    #expect(H264ProfileLevelID(hex: "42E01F")?.description == "42e01f")
    #expect(H264ProfileLevelID(hex: "42e01") == nil)
    #expect(H264ProfileLevelID(hex: "42g01f") == nil)
    #expect(H264Profile.main.profileLevelID(level: 0x1F).displayName == "Main (4d401f)")
  }

  @Test func aMoreConstrainedStreamFitsALessConstrainedReceiver() {
    #expect(H264Profile.constrainedBaseline.fits(within: .high))
    #expect(H264Profile.main.fits(within: .main))
    #expect(!H264Profile.high.fits(within: .main))
    #expect(H264Profile(name: "Baseline") == .constrainedBaseline)
    #expect(H264Profile(name: "high10") == nil)
  }
}
