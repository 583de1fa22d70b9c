import Foundation

/// The `${NAME}` references of configuration values: the one reader of that syntax, for expanding a value
/// (``ConfigMap``) and for naming every variable a file needs (an optional provider that is skipped).
public enum EnvironmentReference {
    /// A value taken apart: literal text and the names it references, in order.
    public enum Piece: Equatable, Sendable {
        case text(Substring)
        case variable(String)
        /// `${` without a closing `}`: the rest of the value.
        case unterminated
    }

    /// The pieces of `text`; a value without `${` is one text piece.
    public static func pieces(of text: String) -> [Piece] {
        var pieces: [Piece] = []
        var rest = Substring(text)
        while let start = rest.range(of: "${") {
            if start.lowerBound > rest.startIndex { pieces.append(.text(rest[..<start.lowerBound])) }
            guard let end = rest[start.upperBound...].firstIndex(of: "}") else {
                pieces.append(.unterminated)
                return pieces
            }
            pieces.append(.variable(String(rest[start.upperBound..<end])))
            rest = rest[rest.index(after: end)...]
        }
        if !rest.isEmpty { pieces.append(.text(rest)) }
        return pieces
    }

    /// The names every scalar of a configuration tree references, in order of appearance, each once.
    public static func names(in node: ConfigNode) -> [String] {
        var names: [String] = []
        func walk(_ node: ConfigNode) {
            switch node.value {
            case .null: break
            case .scalar(let text):
                for case .variable(let name) in pieces(of: text) where !name.isEmpty && !names.contains(name) { names.append(name) }
            case .sequence(let items): items.forEach(walk)
            case .mapping(let entries): for entry in entries { walk(entry.value) }
            }
        }
        walk(node)
        return names
    }
}
