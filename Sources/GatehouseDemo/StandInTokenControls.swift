/// The state behind a stand-in authorization server's test controls.
///
/// Only the stand-ins in this module make one; it is public because the default implementations of
/// ``StandInTokenServer`` reach it, and has nothing to call from outside.
public final class StandInTokenControls<Stats: Sendable>: Sendable {
    let state: any StandInTokenState<Stats>

    init(state: any StandInTokenState<Stats>) {
        self.state = state
    }
}
