/// Text placed into HTML the gateway or its stand-ins write themselves.
public enum HTMLEscaping {
    /// Escapes `&`, `<`, `>`, `"` and `'`: enough for element content and quoted attribute values.
    public static func escape(_ text: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}
