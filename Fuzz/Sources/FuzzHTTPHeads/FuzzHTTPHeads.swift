import FuzzSupport
import GatehouseCore

/// The relay engine's readers of HTTP/1.1 bytes (a request head, an answer's head, a chunked body), each on any
/// input, with the properties a relay writing bytes relies on checked (a violated one crashes, so libFuzzer reports
/// it): every range lies within the head and in order, a head read again from its own bytes reads the same, and a
/// chunked body scanned in two pieces ends where it ends in one, with the same data.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTPHeads(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let input = FuzzInput(start, count)
    let bytes = Array(input.bytes.dropFirst())
    bytes.withUnsafeBytes { raw in
        switch input.selector % 4 {
        case 0: checkRequest(raw)
        case 1, 2: checkResponse(raw, toHEAD: input.selector % 4 == 2)
        default: checkChunked(raw, split: Int(input.selector / 4))
        }
    }
    return 0
}

private func checkRequest(_ bytes: UnsafeRawBufferPointer) {
    guard case .read(let view) = RequestHeadReader.read(bytes) else { return }
    precondition(view.length <= bytes.count && view.method.lowerBound == 0 && view.method.upperBound < view.target.lowerBound)
    checkFields(view.fields, after: view.target.upperBound, length: view.length)
    precondition(RequestHeadReader.read(UnsafeRawBufferPointer(rebasing: bytes[..<view.length])) == .read(view), "read again otherwise")
}

private func checkResponse(_ bytes: UnsafeRawBufferPointer, toHEAD: Bool) {
    guard case .read(let view) = ResponseHeadReader.read(bytes, toHEAD: toHEAD) else { return }
    precondition(view.length <= bytes.count && view.statusLineEnd < view.length && (100...999).contains(view.status))
    checkFields(view.fields, after: view.statusLineEnd, length: view.length)
    if toHEAD || view.status < 200 || view.status == 204 || view.status == 304 { precondition(view.framing == .bodiless) }
    let again = ResponseHeadReader.read(UnsafeRawBufferPointer(rebasing: bytes[..<view.length]), toHEAD: toHEAD)
    precondition(again == .read(view), "read again otherwise")
}

private func checkFields(_ fields: [HeadField], after start: Int, length: Int) {
    var last = start
    for field in fields {
        precondition(field.name.lowerBound > last && !field.name.isEmpty && field.name.upperBound < field.value.lowerBound)
        precondition(field.value.upperBound <= length - 2)
        last = field.value.upperBound
    }
}

private func checkChunked(_ bytes: UnsafeRawBufferPointer, split: Int) {
    let whole = scan([bytes])
    let at = bytes.isEmpty ? 0 : split % bytes.count
    let pieces = scan([UnsafeRawBufferPointer(rebasing: bytes[..<at]), UnsafeRawBufferPointer(rebasing: bytes[at...])])
    precondition(whole.data == pieces.data, "data differs when split at \(at)")
    switch (whole.step, pieces.step) {
    case (.ended(let end), .ended(let second)): precondition(end == (end <= at ? second : second + at), "ends differ when split at \(at)")
    case (.invalid, .invalid), (.needMore, .needMore): break
    default: preconditionFailure("split at \(at): \(whole.step) whole, \(pieces.step) in two")
    }
}

/// The scanner's last step over `pieces`, and the data it named (as bytes).
private func scan(_ pieces: [UnsafeRawBufferPointer]) -> (step: ChunkedBodyScanner.Step, data: [UInt8]) {
    var scanner = ChunkedBodyScanner()
    var data: [UInt8] = []
    var step = ChunkedBodyScanner.Step.needMore
    for piece in pieces {
        step = scanner.scan(piece) { data += piece[$0] }
        if step != .needMore { break }
    }
    return (step, data)
}
