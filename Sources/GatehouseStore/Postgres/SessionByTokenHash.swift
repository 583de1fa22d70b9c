import GatehouseCore
import PostgresNIO

/// `SELECT` of the session a token hash names: the query of every authenticated request, kept prepared.
struct SessionByTokenHash: PostgresPreparedStatement {
    static let name = "gatehouse_session_by_token_hash"
    static let sql = "SELECT \(PostgresSessionStore.sessionColumns) FROM sessions WHERE token_hash = $1"
    static let bindingDataTypes: [PostgresDataType] = [.text]

    typealias Row = SessionRecord

    var tokenHash: String

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 1)
        bindings.append(tokenHash)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> SessionRecord {
        try PostgresSessionStore.sessionRecord(row)
    }
}
