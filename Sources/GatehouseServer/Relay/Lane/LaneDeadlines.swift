import NIOCore

/// The upstream timeouts of an HTTP/2 connection's lane streams (``LaneStream``), on one timer for the connection.
///
/// A lane stream lives for one request, so a timer of its own would be scheduled and cancelled for every request.
/// Here a stream only joins the watched set when its request goes out and leaves it when its stream ends. The timer
/// is armed for the earliest deadline it has been given and, when it fires, asks each watched lane
/// (``LaneFront/checkDeadline(at:)``): one past its deadline answers 504, one whose answer started leaves the set,
/// and the timer is armed again for the earliest deadline still to come. Reached on the connection's loop only.
final class LaneDeadlines {
    private var watched: [ObjectIdentifier: LaneStream] = [:]
    private var timer: Scheduled<Void>?
    private var armedFor = NIODeadline.distantFuture

    /// `lane` has a request out that must be answered by `deadline`.
    func watch(_ lane: LaneStream, until deadline: NIODeadline, on eventLoop: any EventLoop) {
        watched[ObjectIdentifier(lane)] = lane
        if timer == nil || deadline < armedFor { arm(at: deadline, on: eventLoop) }
    }

    /// `lane`'s stream ended (or it handed the stream over): nothing of it is due.
    func forget(_ lane: LaneStream) {
        watched[ObjectIdentifier(lane)] = nil
    }

    private func arm(at deadline: NIODeadline, on eventLoop: any EventLoop) {
        timer?.cancel()
        armedFor = deadline
        timer = eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [weak self] in self?.fired(on: eventLoop) }
    }

    private func fired(on eventLoop: any EventLoop) {
        timer = nil
        let now = eventLoop.now
        var next: NIODeadline?
        for (id, lane) in watched {
            if let pending = lane.checkDeadline(at: now) {
                next = min(next ?? pending, pending)
            } else {
                watched[id] = nil
            }
        }
        if let next { arm(at: next, on: eventLoop) }
    }
}
