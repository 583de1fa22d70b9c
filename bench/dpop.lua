-- wrk script for a DPoP-bound session: every request carries `Authorization: DPoP <token>` and its own
-- proof. wrk cannot sign, so the proofs come from a file (`gatehouse-bench dpop-proofs`, one per line);
-- each thread takes every n-th line, so no proof is sent twice. Usage:
--   wrk -t THREADS -s bench/dpop.lua URL PROOFS_FILE TOKEN THREADS
-- Every request is built once in `init`, before the run's clock starts: `request()` only hands out the next
-- one, as cheap as the bearer rows' static request, so the client keeps the gateway as busy as they do.
local counter = 0

-- wrk calls setup (main state) and then init (the thread's state) for one thread after the other.
function setup(thread)
    thread:set("index", counter)
    counter = counter + 1
end

function init(args)
    local file, token, nthreads = args[1], args[2], tonumber(args[3])
    local authorization = "DPoP " .. token
    requests, next_request = {}, 1
    local line_number = 0
    for line in io.lines(file) do
        if line_number % nthreads == index then
            requests[#requests + 1] = wrk.format(nil, nil, {["Authorization"] = authorization, ["DPoP"] = line})
        end
        line_number = line_number + 1
    end
end

function request()
    -- Past the end: the last proof again, which the gateway refuses as a replay (counted as non-2xx).
    local built = requests[next_request] or requests[#requests]
    next_request = next_request + 1
    return built
end
