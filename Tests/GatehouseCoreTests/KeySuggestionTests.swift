import GatehouseCore
import Testing

@Suite struct KeySuggestionTests {
    @Test(arguments: [
        ("tokn_endpoint", "token_endpoint"), ("client_secrets", "client_secret"), ("lisen", "listen"),
        ("scpoes", "scopes"), ("Issuer", "issuer"),
    ])
    func aTypoSuggestsTheKeyItMeant(typo: String, meant: String) {
        let known = ["token_endpoint", "client_secret", "listen", "scopes", "issuer", "client_id", "kind", "id"]
        #expect(KeySuggestion.closest(to: typo, among: known) == meant)
    }

    @Test func aDifferentWordSuggestsNothing() {
        #expect(KeySuggestion.closest(to: "colour", among: ["listen", "issuer", "kind"]) == nil)
        #expect(KeySuggestion.closest(to: "ix", among: ["id", "kind"]) == "id")
        #expect(KeySuggestion.closest(to: "xy", among: ["id", "kind"]) == nil)
    }
}
