// The portable half (file writing, clock, threads, locks) lives in IngestPlatform, which an
// iOS app can take alone; every module that imports IngestPOSIX sees it as before.
@_exported import IngestPlatform
