import GatehouseCore
import Testing

struct EnvironmentReferenceTests {
    @Test func aValueIsTakenApartIntoTextAndNames() {
        #expect(EnvironmentReference.pieces(of: "plain") == [.text("plain")])
        #expect(EnvironmentReference.pieces(of: "${A}") == [.variable("A")])
        #expect(
            EnvironmentReference.pieces(of: "x${A}y${B}${C}z") == [
                .text("x"), .variable("A"), .text("y"), .variable("B"), .variable("C"), .text("z"),
            ])
        #expect(EnvironmentReference.pieces(of: "${}") == [.variable("")])
        #expect(EnvironmentReference.pieces(of: "a${B") == [.text("a"), .unterminated])
        #expect(EnvironmentReference.pieces(of: "$A {B} $") == [.text("$A {B} $")])
        #expect(EnvironmentReference.pieces(of: "").isEmpty)
    }

    @Test func everyNameOfATreeOnceInOrder() {
        let leaf = { (text: String) in ConfigNode(.scalar(text), file: "f", line: 1) }
        let tree = ConfigNode(
            .mapping([
                .init(key: "a", line: 1, value: leaf("${ONE}")),
                .init(key: "b", line: 2, value: ConfigNode(.sequence([leaf("x${TWO}"), leaf("${ONE}${}")]), file: "f", line: 2)),
                .init(key: "c", line: 3, value: ConfigNode(.mapping([.init(key: "d", line: 4, value: leaf("${THREE"))]), file: "f", line: 3)),
                .init(key: "${KEY}", line: 5, value: ConfigNode(.null, file: "f", line: 5)),
            ]), file: "f", line: 1)
        #expect(EnvironmentReference.names(in: tree) == ["ONE", "TWO"])
    }
}
