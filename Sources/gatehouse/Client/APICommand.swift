import ArgumentParser
import Foundation
import NIOHTTP1

/// `gatehouse api`: a request to the backend behind a gateway (`{gateway}/v1/api/PATH`) as the signed-in user,
/// curl-style; the answer's body goes to stdout as it is, and a status of 400 or more exits 1.
struct APICommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "api",
        abstract: "Call the backend behind a gateway as the signed-in user ({gateway}/v1/api/PATH).",
        discussion: """
            The body of the answer is printed as it is. Exits 1 when the status is 400 or more (with \
            'error: HTTP <status>' and the problem's code and detail on stderr).
            """)

    @Option(help: "The gateway (default: the only one you are signed in to).") var gateway: String?
    @OptionGroup var trust: TrustOptions
    @Option(name: [.customShort("X"), .customLong("request")], help: "The HTTP method (default GET, or POST with -d).") var method: String?
    @Option(name: [.customShort("d"), .customLong("data")], help: "The request body: text, @file to read a file, or - to read stdin.")
    var data: String?
    @Option(name: [.customShort("H"), .customLong("header")], help: "An extra header, 'Name: value' (repeatable).") var headers: [String] = []
    @Argument(help: "The path below /v1/api, with or without a leading /, query included (e.g. /orders?status=open).") var path: String

    func validate() throws {
        for header in headers {
            guard let colon = header.firstIndex(of: ":"), !header[..<colon].trimmingCharacters(in: .whitespaces).isEmpty else {
                throw ValidationError("-H '\(header)': give 'Name: value'")
            }
        }
        if let method, method.isEmpty || method.contains(where: { !$0.isLetter && $0 != "-" && $0 != "_" }) {
            throw ValidationError("-X '\(method)' is not an HTTP method")
        }
    }

    func run() async throws {
        try await ClientFailure.reporting {
            var session = try SignedInSession.load(gateway: gateway)
            let body = try readBody()
            let httpMethod = HTTPMethod(rawValue: (method ?? (body == nil ? "GET" : "POST")).uppercased())
            var fields: [(String, String)] = headers.map { header in
                let colon = header.firstIndex(of: ":")!
                return (
                    header[..<colon].trimmingCharacters(in: .whitespaces), header[header.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                )
            }
            if let body, !fields.contains(where: { $0.0.caseInsensitiveCompare("Content-Type") == .orderedSame }) {
                let isJSON = (try? JSONSerialization.jsonObject(with: Data(body), options: [.fragmentsAllowed])) != nil
                fields.append(("Content-Type", isJSON ? "application/json" : "application/octet-stream"))
            }
            let target = "/v1/api/" + path.drop { $0 == "/" }
            let response = try await GatewayClient.with(gateway: session.gateway, caFile: session.caFile(given: trust.caFile)) { [fields] client in
                try await session.send(client, httpMethod, target, headers: fields, body: body)
            }
            ClientOutput.raw(response.body)
            if response.status >= 400 {
                let problem = response.problem.map { ": \($0.summary)" } ?? ""
                throw ClientFailure("HTTP \(response.status)\(problem)")
            }
        }
    }

    /// The bytes of `-d`: the text itself, a file's contents (`@file`), or stdin (`-`).
    private func readBody() throws -> [UInt8]? {
        guard let data else { return nil }
        if data == "-" {
            return Array(FileHandle.standardInput.readDataToEndOfFile())
        }
        if data.hasPrefix("@") {
            let file = String(data.dropFirst())
            guard let contents = FileManager.default.contents(atPath: file) else { throw ClientFailure("cannot read \(file)") }
            return Array(contents)
        }
        return Array(data.utf8)
    }
}
