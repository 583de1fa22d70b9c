import Foundation
import GatehouseCore

/// The `window.external.Notify` shim of ACS login pages: an ACS page hands the token to
/// `window.external.Notify(string)` (the IE/WebBrowser-control host API). The shim defines both spellings
/// and submits the string as a top-level form POST (field `payload`) to the capture endpoint; a
/// navigation works from the proxy's sandboxed page, and its answer is the end of the login.
enum ACSNotifyShim {
    /// The form field that carries the Notify string.
    static let field = "payload"

    static func script(captureURL: String) -> String {
        let url = captureURL.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'")
        return """
            <script>(function(){var sent=false;function notify(s){if(sent)return;sent=true;\
            var go=function(){var f=document.createElement('form');f.method='POST';f.action='\(url)';\
            var i=document.createElement('input');i.type='hidden';i.name='\(field)';i.value=String(s);f.appendChild(i);\
            (document.body||document.documentElement).appendChild(f);f.submit();};\
            if(document.body){go();}else{document.addEventListener('DOMContentLoaded',go);}}\
            var ext={Notify:notify,notify:notify};\
            try{window.external=ext;}catch(e){}\
            try{if(window.external!==ext){Object.defineProperty(window,'external',{value:ext,configurable:true,writable:true});}}catch(e){}\
            try{window.external.Notify=notify;window.external.notify=notify;}catch(e){}})();</script>
            """
    }

    /// The Notify string in a post: the form's `payload` field, or the body a script posted itself.
    static func token(fromPost body: String, isForm: Bool) -> String? {
        guard isForm else { return body }
        return FormEncoding.decode(body).first { $0.0 == field }?.1
    }
}
