import Foundation
import GatehouseCore
import GatehouseTestSupport

/// Test-only HTTP client for the stand-in tests: runs `/usr/bin/curl` and reads back status, headers and body
/// (this target has no HTTP client of its own).
struct StandInCurl {
    struct Result {
        var status: Int
        var headers: [(String, String)]
        var body: Data

        var text: String { String(decoding: body, as: UTF8.self) }
        var json: JSONValue? { JSONValue.parse(body) }

        func header(_ name: String) -> String? {
            headers.first { $0.0.lowercased() == name.lowercased() }?.1
        }
    }

    struct Failure: Error {
        var exitCode: Int32
        var message: String
    }

    static func run(
        _ url: String,
        method: String? = nil,
        form: [(String, String)]? = nil,
        body: String? = nil,
        basic: (String, String)? = nil,
        bearer: String? = nil,
        headers: [String] = []
    ) async throws -> Result {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("curl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let headerFile = directory.appendingPathComponent("headers")
        let bodyFile = directory.appendingPathComponent("body")

        var arguments = ["-sS", "--max-time", "20", "-D", headerFile.path, "-o", bodyFile.path]
        if let method { arguments += ["-X", method] }
        if let form { arguments += ["--data-binary", FormEncoding.encode(form), "-H", "Content-Type: application/x-www-form-urlencoded"] }
        if let body { arguments += ["--data-binary", body, "-H", "Content-Type: text/plain"] }
        if let (user, password) = basic { arguments += ["-u", "\(user):\(password)"] }
        if let bearer { arguments += ["-H", "Authorization: Bearer \(bearer)"] }
        for header in headers { arguments += ["-H", header] }
        arguments.append(url)

        let errorsFile = directory.appendingPathComponent("errors")
        let exitCode = try await ChildProcess.run(
            "/usr/bin/curl", arguments, stdout: directory.appendingPathComponent("stdout"), stderr: errorsFile)
        guard exitCode == 0 else {
            let message = (try? String(contentsOf: errorsFile, encoding: .utf8)) ?? ""
            throw Failure(exitCode: exitCode, message: message)
        }

        let headerText = try String(contentsOf: headerFile, encoding: .utf8)
        let lines = headerText.components(separatedBy: "\r\n")
        let status = lines.first.flatMap { $0.split(separator: " ").dropFirst().first }.flatMap { Int($0) } ?? 0
        let fields = lines.dropFirst().compactMap { line -> (String, String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        let data = (try? Data(contentsOf: bodyFile)) ?? Data()
        return Result(status: status, headers: fields, body: data)
    }
}
