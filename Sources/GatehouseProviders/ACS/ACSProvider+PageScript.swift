public import GatehouseCore

extension ACSProvider: PageScriptCapturing {
    public func pageScript(captureURL: String) -> String {
        ACSNotifyShim.script(captureURL: captureURL)
    }

    public func capturedToken(fromPost body: String, isForm: Bool) -> String? {
        ACSNotifyShim.token(fromPost: body, isForm: isForm)
    }
}
