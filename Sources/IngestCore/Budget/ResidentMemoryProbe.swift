/// Reads the resident memory of the whole process from the operating system.
///
/// Injected so that Linux reads `/proc/self/statm` and iOS can use `task_vm_info`.
public protocol ResidentMemoryProbe: Sendable {
  /// Resident bytes now, or nil when the system cannot tell.
  func residentBytes() -> Int?
}
