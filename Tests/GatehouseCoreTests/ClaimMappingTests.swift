import Foundation
import GatehouseCore
import Testing

@Suite struct ClaimMappingTests {
    static func claims(_ text: String) throws -> JSONValue {
        try #require(JSONValue.parse(Data(text.utf8)))
    }

    @Test("the default mapping reads sub, email, name and a groups array")
    func defaultMapping() throws {
        let claims = try Self.claims(
            #"{"sub":"248289761001","email":"janedoe@example.com","name":"Jane Doe","groups":["staff","admins"],"locale":"nb"}"#)
        let identity = try #require(ClaimMapping().identity(from: claims))
        #expect(identity.subject == "248289761001")
        #expect(identity.email == "janedoe@example.com")
        #expect(identity.name == "Jane Doe")
        #expect(identity.groups == ["staff", "admins"])
        #expect(identity.claims["locale"] == "nb")
    }

    @Test("custom claim names, a numeric subject, a nested name and space-separated groups")
    func customMapping() throws {
        let mapping = ClaimMapping(subject: "user_id", email: "mail", name: "name.formatted", groups: "roles")
        let claims = try Self.claims(
            #"{"user_id":938029,"mail":"ola@example.no","name":{"formatted":"Ola Nordmann"},"roles":"reader writer","sub":"ignored"}"#)
        let identity = try #require(mapping.identity(from: claims))
        #expect(identity.subject == "938029")
        #expect(identity.email == "ola@example.no")
        #expect(identity.name == "Ola Nordmann")
        #expect(identity.groups == ["reader", "writer"])
    }

    @Test("a missing or empty subject claim gives no identity")
    func missingSubject() throws {
        #expect(ClaimMapping().identity(from: try Self.claims(#"{"email":"a@example.com"}"#)) == nil)
        #expect(ClaimMapping().identity(from: try Self.claims(#"{"sub":""}"#)) == nil)
        #expect(ClaimMapping().identity(from: try Self.claims(#"{"sub":{"nested":true}}"#)) == nil)
        #expect(ClaimMapping(subject: "username").identity(from: try Self.claims(#"{"sub":"x"}"#)) == nil)
        #expect(ClaimMapping().identity(from: .string("not an object")) == nil)
    }

    @Test("optional fields are nil or empty when absent; only string-like claims are kept as extras")
    func absentOptionalFields() throws {
        let identity = try #require(ClaimMapping().identity(from: try Self.claims(#"{"sub":"u1","address":{"country":"NO"},"verified":true,"n":7}"#)))
        #expect(identity.email == nil)
        #expect(identity.name == nil)
        #expect(identity.groups.isEmpty)
        #expect(identity.claims["address"] == nil)
        #expect(identity.claims["verified"] == "true")
        #expect(identity.claims["n"] == "7")
    }

    @Test("claims: in a provider file overrides the defaults and refuses unknown keys")
    func fromConfigMap() throws {
        let map = try ConfigMap(Nodes.scalars([("subject", "username"), ("email", "mail")]), section: "claims")
        let mapping = try ClaimMapping(map)
        #expect(mapping == ClaimMapping(subject: "username", email: "mail"))

        let typo = try ConfigMap(Nodes.scalars([("subject", "username"), ("emial", "mail")]), section: "claims")
        let error = try #require(throws: ConfigError.self) { try ClaimMapping(typo) }
        #expect(error.message == "unknown key 'claims.emial': did you mean 'claims.email'?")
        #expect(error.line == 2)

        #expect(try ClaimMapping(nil) == ClaimMapping())
    }
}
