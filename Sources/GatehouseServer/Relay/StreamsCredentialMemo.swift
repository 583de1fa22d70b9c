/// The credential memo (``CredentialMemo``) of an HTTP/2 connection, shared by the relay handlers of its
/// streams. On HTTP/1.1 the relay's handler lives as long as its connection and keeps the memo itself; on
/// HTTP/2 each stream has a handler of its own for one request, so without this every stream would resolve its
/// token again. It holds exactly what one HTTP/1.1 connection's handler would: the last credential its client
/// presented, under the same checks (``SessionResolver``'s `credentialFromMemory`).
///
/// Not `Sendable`: the streams of a connection run on the connection's event loop, and the memo is reached only
/// there (through `NIOLoopBound`).
final class StreamsCredentialMemo {
    var memo: CredentialMemo?
}
