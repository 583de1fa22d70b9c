import GatehouseCore
import NIOHTTP1

extension HeadField {
    /// `fields` as NIOHTTP1's fields, from the bytes they were read from.
    static func headers(_ fields: [HeadField], in bytes: UnsafeRawBufferPointer) -> HTTPHeaders {
        var headers = HTTPHeaders()
        headers.reserveCapacity(fields.count)
        for field in fields {
            headers.add(name: string(bytes, field.name), value: string(bytes, field.value))
        }
        return headers
    }

    static func string(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> String {
        String(decoding: UnsafeRawBufferPointer(rebasing: bytes[range]), as: UTF8.self)
    }
}
