/// Which sessions of one provider a provider-initiated logout names (OpenID Connect Back-Channel Logout 1.0 §2.4).
public enum ProviderSessionMatch: Sendable, Equatable {
    /// The sessions created from the provider's session `sid`; with `subject`, only those of that subject too.
    case providerSession(sid: String, subject: String?)
    /// Every session of the subject at the provider.
    case subject(String)

    /// Whether a session of that provider matches.
    public func matches(_ record: SessionRecord) -> Bool {
        switch self {
        case .providerSession(let sid, let subject):
            record.providerSessionID == sid && (subject == nil || record.subject == subject)
        case .subject(let subject): record.subject == subject
        }
    }
}
