import Foundation
import GatehouseCore
import Testing

@Suite struct JSONValueTests {
    @Test("parse reads objects, arrays, strings, numbers, booleans and null")
    func parseShapes() throws {
        let json = try #require(JSONValue.parse(Data(#"{"s":"x","n":42,"f":1.5,"t":true,"z":null,"a":[1,"two"],"o":{"k":"v"}}"#.utf8)))
        #expect(json["s"] == .string("x"))
        #expect(json["n"] == .number(42))
        #expect(json["f"] == .number(1.5))
        #expect(json["t"] == .bool(true))
        #expect(json["z"] == .null)
        #expect(json["a"] == .array([.number(1), .string("two")]))
        #expect(json["o"] == .object(["k": .string("v")]))
        #expect(json["missing"] == nil)
    }

    @Test("numbers 0 and 1 stay numbers and are not read as booleans")
    func numbersAreNotBooleans() throws {
        let json = try #require(JSONValue.parse(Data(#"{"zero":0,"one":1,"f":false}"#.utf8)))
        #expect(json["zero"] == .number(0))
        #expect(json["one"] == .number(1))
        #expect(json["f"] == .bool(false))
    }

    @Test("parse returns nil for bytes that are not JSON")
    func parseRefusesGarbage() {
        #expect(JSONValue.parse(Data("<html>oops</html>".utf8)) == nil)
        #expect(JSONValue.parse(Data()) == nil)
        #expect(JSONValue.parse(Data(#"{"a":"#.utf8)) == nil)
    }

    @Test("subscripting a non-object gives nil")
    func subscriptNonObject() {
        #expect(JSONValue.string("x")["a"] == nil)
        #expect(JSONValue.array([.string("x")])[path: "a.b"] == nil)
    }

    @Test("a dotted path walks nested objects")
    func dottedPath() throws {
        let json = try #require(JSONValue.parse(Data(#"{"name":{"formatted":"Alice Liddell","parts":{"given":"Alice"}}}"#.utf8)))
        #expect(json[path: "name.formatted"] == .string("Alice Liddell"))
        #expect(json[path: "name.parts.given"] == .string("Alice"))
        #expect(json[path: "name.missing"] == nil)
        #expect(json[path: "name.formatted.deeper"] == nil)
    }

    @Test("a key that itself contains dots is found whole before the path is split")
    func dottedKeyWinsOverPath() throws {
        let json = try #require(JSONValue.parse(Data(#"{"https://example.com/roles":"admin","a.b":"whole","a":{"b":"nested"}}"#.utf8)))
        #expect(json[path: "a.b"] == .string("whole"))
        #expect(json[path: "https://example.com/roles"] == .string("admin"))
    }

    @Test("stringValue prints whole numbers without a fraction: SPiD's user_id 938029 is \"938029\"")
    func stringValueOfWholeNumber() throws {
        let json = try #require(JSONValue.parse(Data(#"{"user_id":938029,"neg":-3,"big":1700000000}"#.utf8)))
        #expect(json["user_id"]?.stringValue == "938029")
        #expect(json["neg"]?.stringValue == "-3")
        #expect(json["big"]?.stringValue == "1700000000")
    }

    @Test("stringValue of strings, fractions and booleans; nil for arrays, objects and null")
    func stringValueOfOtherShapes() {
        #expect(JSONValue.string("938029").stringValue == "938029")
        #expect(JSONValue.number(1.5).stringValue == "1.5")
        #expect(JSONValue.bool(true).stringValue == "true")
        #expect(JSONValue.bool(false).stringValue == "false")
        #expect(JSONValue.null.stringValue == nil)
        #expect(JSONValue.array([]).stringValue == nil)
        #expect(JSONValue.object([:]).stringValue == nil)
    }

    @Test("doubleValue reads numbers and numeric strings (expires_in may be either)")
    func doubleValue() {
        #expect(JSONValue.number(3600).doubleValue == 3600)
        #expect(JSONValue.string("3600").doubleValue == 3600)
        #expect(JSONValue.string("soon").doubleValue == nil)
        #expect(JSONValue.bool(true).doubleValue == nil)
    }

    @Test("encoding and parsing again gives the same value")
    func codableRoundTrip() throws {
        let value = JSONValue.object([
            "s": .string("x"), "n": .number(938029), "b": .bool(false), "z": .null,
            "a": .array([.number(1.25), .object(["k": .string("v")])]),
        ])
        let data = try JSONEncoder().encode(value)
        #expect(JSONValue.parse(data) == value)
    }

    @Test("numeric ids of 10^15 and more keep every digit and no exponent")
    func largeIntegers() throws {
        let json = try #require(
            JSONValue.parse(Data(#"{"id": 1234567890123456789, "small": 42, "edge": 1000000000000000, "neg": -9007199254740993}"#.utf8)))
        #expect(json["id"]?.stringValue == "1234567890123456789")
        #expect(json["edge"]?.stringValue == "1000000000000000")
        #expect(json["neg"]?.stringValue == "-9007199254740993")
        #expect(json["small"] == .number(42))
        let mapped = ClaimMapping(subject: "id").identity(from: json)
        #expect(mapped?.subject == "1234567890123456789")
        // And back out unchanged (handoff payloads are JSON).
        let encoded = String(decoding: try JSONEncoder().encode(json["id"]), as: UTF8.self)
        #expect(encoded == "1234567890123456789")
    }
}
