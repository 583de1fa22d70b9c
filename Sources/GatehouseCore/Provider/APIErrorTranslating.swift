public import Foundation

/// A provider whose API wraps errors in its own format (SPiD's "SPP Container"): the gateway turns
/// them into problems with a stable `code` instead of passing provider bodies through.
public protocol APIErrorTranslating: AuthProvider {
    /// The problem for an error answer of the provider's API, or nil to pass it through as is.
    func problem(forAPIStatus status: Int, body: Data) -> GatehouseError?
}
