import Foundation
import GatehouseCore
import Testing

@Suite("Identity claims kept for the upstreams")
struct IdentityClaimsTests {
    @Test("string claims as they are, lists of scalars joined with ',', objects and mixed lists not kept")
    func values() throws {
        let claims = try JSONDecoder().decode(
            JSONValue.self,
            from: Data(
                #"{"sub":"alice","department":"R&D","roles":["admin","ops"],"levels":[1,true],"address":{"city":"X"},"mixed":["a",{"b":1}]}"#
                    .utf8))
        let identity = try #require(ClaimMapping().identity(from: claims))
        #expect(identity.claimValue("department") == "R&D")
        #expect(identity.claimValue("roles") == "admin,ops")
        #expect(identity.claimValue("levels") == "1,true")
        #expect(identity.claimValue("address") == nil)
        #expect(identity.claimValue("mixed") == nil)
        #expect(identity.claimValue("missing") == nil)
    }

    @Test("an identity stored before list claims were kept reads as before; one without any is stored as before")
    func storedForm() throws {
        let old = Data(#"{"subject":"alice","groups":[],"claims":{"department":"R&D"}}"#.utf8)
        let identity = try JSONDecoder().decode(Identity.self, from: old)
        #expect(identity.listClaims.isEmpty && identity.claimValue("department") == "R&D")
        let written = String(decoding: try JSONEncoder().encode(identity), as: UTF8.self)
        #expect(!written.contains("listClaims"))
        let withLists = Identity(subject: "a", listClaims: ["roles": ["x"]])
        #expect(try JSONDecoder().decode(Identity.self, from: JSONEncoder().encode(withLists)) == withLists)
    }
}
