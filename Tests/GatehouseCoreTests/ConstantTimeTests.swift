import Foundation
import GatehouseCore
import Testing

@Suite struct ConstantTimeTests {
    @Test("equal bytes are equal, and any one byte changed, or another length, is not: in strings, arrays, Data and views")
    func comparesEveryByte() {
        let text = "fUHyO2r2Z3DZ53EsNrWBb0xWXoaNy59IiKCAqksmQEo"
        #expect(ConstantTime.equal(text.utf8, String(text).utf8))
        #expect(ConstantTime.equal(Data(text.utf8), Array(text.utf8)))
        // A slice of a string's bytes is contiguous too; a lazy view has no contiguous storage and takes the other path.
        #expect(ConstantTime.equal(("." + text).utf8.dropFirst(), text.utf8))
        #expect(ConstantTime.equal(text.utf8.lazy.map { $0 }, text.utf8))
        let bytes = Array(text.utf8)
        for index in bytes.indices {
            var changed = bytes
            changed[index] ^= 0x01
            #expect(!ConstantTime.equal(changed, bytes))
            #expect(!ConstantTime.equal(String(decoding: changed, as: UTF8.self).utf8, text.utf8))
            #expect(!ConstantTime.equal(changed.lazy.map { $0 }, bytes))
        }
        #expect(!ConstantTime.equal(text.utf8.dropLast(), text.utf8))
        #expect(ConstantTime.equal("".utf8, [UInt8]()))
    }
}
