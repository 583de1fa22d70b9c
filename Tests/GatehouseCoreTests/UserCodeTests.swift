import GatehouseCore
import Testing

@Suite struct UserCodeTests {
    @Test("a fresh code is XXXX-XXXX from the 20 consonants, and codes differ")
    func fresh() {
        let codes = (0..<200).map { _ in UserCode.make() }
        for code in codes {
            #expect(code.count == 9)
            #expect(Array(code)[4] == "-")
            #expect(code.filter { $0 != "-" }.allSatisfy(UserCode.alphabet.contains))
        }
        #expect(Set(codes).count == codes.count)
        #expect(UserCode.alphabet.count == 20)
        #expect(!UserCode.alphabet.contains { "AEIOUY0123456789".contains($0) })
    }

    @Test("every character of the alphabet turns up")
    func coverage() {
        let seen = Set((0..<500).flatMap { _ in UserCode.make().filter { $0 != "-" } })
        #expect(seen == Set(UserCode.alphabet))
    }

    @Test("a typed code is accepted in lower case, without the dash, with spaces")
    func normalize() {
        #expect(UserCode.normalize("BCDF-GHJK") == "BCDFGHJK")
        #expect(UserCode.normalize("bcdf-ghjk") == "BCDFGHJK")
        #expect(UserCode.normalize("bcdfghjk") == "BCDFGHJK")
        #expect(UserCode.normalize("  BCDF GHJK ") == "BCDFGHJK")
        #expect(UserCode.normalize("b c d f - g h j k") == "BCDFGHJK")
        #expect(UserCode.display("BCDFGHJK") == "BCDF-GHJK")
    }

    @Test("anything that cannot be a code is refused", arguments: ["", "BCDF-GHJ", "BCDF-GHJKL", "ABCD-EFGH", "BCDF-GHJ1", "BCDF_GHJK", "ÄCDF-GHJK"])
    func refused(_ typed: String) {
        #expect(UserCode.normalize(typed) == nil)
    }

    @Test("the stored key is a hash, not the code")
    func hashed() {
        let key = UserCode.hash("BCDFGHJK")
        #expect(!key.contains("BCDFGHJK"))
        #expect(key == UserCode.hash("BCDFGHJK"))
        #expect(key != UserCode.hash("BCDFGHJL"))
    }
}
