public import GatehouseCore

extension APIAuthentication {
    /// `Authorization: WRAP access_token="<token>"`: how Azure ACS relying parties present their token.
    public static let wrap = APIAuthentication(name: "wrap") { credential, request in
        request.headers.append(("Authorization", "WRAP access_token=\"\(credential.accessToken)\""))
    }
}
