import FuzzSupport
import GatehouseCore

private let admin = try! PathPattern("/admin/**")

/// The path normalizer every forwarded and judged path goes through, with the properties the proxy and the
/// access rules rely on checked on every input it accepts (a violated one crashes, so libFuzzer reports it):
/// normalizing is idempotent, no segment is empty, `.` or `..`, and no segment holds a `/`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPath(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let input = FuzzInput(start, count)
    let raw = "/" + input.wholeText
    guard let path = try? NormalizedPath(raw: Substring(raw)) else { return 0 }
    for segment in path.segments {
        precondition(!segment.isEmpty && segment != "." && segment != ".." && !segment.contains("/"), "segment \(segment) of \(raw)")
    }
    let again = try? NormalizedPath(raw: Substring(path.encoded))
    precondition(again == path, "normalizing \(path.encoded) (from \(raw)) again gave \(String(describing: again))")
    _ = admin.matches(path.segments.map { Substring($0) })
    _ = try? PathPattern(input.wholeText)
    return 0
}
