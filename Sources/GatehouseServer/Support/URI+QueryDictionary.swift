import Hummingbird
import HummingbirdCore

extension URI {
    /// The decoded query parameters; of a repeated name, the first one counts.
    var queryDictionary: [String: String] {
        var parameters: [String: String] = [:]
        for (key, value) in queryParameters where parameters[String(key)] == nil {
            parameters[String(key)] = String(value)
        }
        return parameters
    }
}
