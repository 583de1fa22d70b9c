import Foundation
import GatehouseConfiguration
import GatehouseCore
import HTTPTypes

/// What the backend learns about the caller: the identity headers, the signed assertion and (when
/// configured) the provider's access token, as `backend.*` asks. The one list both upstream paths send.
enum BackendIdentityHeaders {
    static let provider = "X-Gatehouse-Provider"
    static let subject = "X-Gatehouse-Subject"
    static let email = "X-Gatehouse-Email"
    static let groups = "X-Gatehouse-Groups"
    static let assertion = "X-Gatehouse-Assertion"
    static let accessToken = "X-Gatehouse-Access-Token"
    /// What `/v1/authz` always answers (empty when unknown).
    static let identityNames = [provider, subject, email, groups, assertion]

    /// Calls `add` once per header; `assertion` is the session's signed assertion when `backend.assertion` is on.
    /// With the identity headers come the claims `identity_headers.claims` names that the session has (a claim it
    /// lacks sends no field; the client's own copy was dropped, ``UpstreamProtocol/forwardedFields(of:client:withholding:_:)``).
    static func add(
        for session: ActiveSession, backend: ServerSettings.BackendSettings, assertion: String?,
        _ add: (_ name: String, _ value: String) -> Void
    ) {
        if backend.identityHeaders {
            add(provider, fieldValue(session.provider))
            add(subject, fieldValue(session.identity.subject))
            if let address = session.identity.email { add(email, fieldValue(address)) }
            if !session.identity.groups.isEmpty { add(groups, fieldValue(groupsValue(session.identity.groups))) }
            for header in backend.claimHeaders {
                if let value = session.identity.claimValue(header.claim) { add(header.name, fieldValue(value)) }
            }
        }
        if backend.assertion, let assertion { add(Self.assertion, assertion) }
        if backend.forwardAccessToken { add(accessToken, fieldValue(session.credential.accessToken)) }
    }

    /// `value` as it may go into a field: identity values and tokens come from providers, and one with a line
    /// break would add fields of its own upstream. Bytes no field value may hold become spaces, exactly as
    /// the router's field type (`HTTPField`) makes them, so both front ends send the same bytes; a legal
    /// value (the common case) is returned as it is, without a copy.
    static func fieldValue(_ value: String) -> String {
        HTTPField.isValidValue(value) ? value : HTTPField(name: legalizingName, value: value).value
    }

    /// Any name: only the value's legalization is wanted of the field.
    private static let legalizingName = HTTPField.Name(subject)!

    /// `X-Gatehouse-Groups`: the groups joined by `,`, each with `%` and `,` percent-encoded (so a group
    /// name holding a comma stays one group).
    static func groupsValue(_ groups: [String]) -> String {
        groups.map { $0.replacingOccurrences(of: "%", with: "%25").replacingOccurrences(of: ",", with: "%2C") }.joined(separator: ",")
    }
}
