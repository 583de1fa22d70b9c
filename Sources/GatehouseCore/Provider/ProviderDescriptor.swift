/// The keys every provider kind has.
public struct ProviderDescriptor: Sendable, Equatable {
    public var id: String
    public var kind: String
    /// Display name (defaults to the id).
    public var name: String
    /// Client redirect URIs allowed for this provider, added to the global list.
    public var redirectURIs: [String]
    public var claims: ClaimMapping
    public var api: ProviderAPI?
    /// `tls.ca_file`: a PEM bundle the provider's own calls (endpoints, API, login pages) trust besides
    /// `outbound_tls` (absolute).
    public var caFile: String?

    public init(
        id: String, kind: String, name: String? = nil, redirectURIs: [String] = [], claims: ClaimMapping = ClaimMapping(), api: ProviderAPI? = nil,
        caFile: String? = nil
    ) {
        self.caFile = caFile
        self.id = id
        self.kind = kind
        self.name = name ?? id
        self.redirectURIs = redirectURIs
        self.claims = claims
        self.api = api
    }
}
