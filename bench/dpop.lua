-- wrk script for a DPoP-bound session: every request carries `Authorization: DPoP <token>` and its own
-- proof. wrk cannot sign, so the proofs come from a file (`gatehouse-bench dpop-proofs`, one per line);
-- each thread takes every n-th line, so no proof is sent twice. Usage:
--   wrk -t THREADS -s bench/dpop.lua URL PROOFS_FILE TOKEN THREADS
local counter = 0

-- wrk calls setup (main state) and then init (the thread's state) for one thread after the other.
function setup(thread)
    thread:set("index", counter)
    counter = counter + 1
end

function init(args)
    local file, token, nthreads = args[1], args[2], tonumber(args[3])
    proofs, next_proof, authorization = {}, 1, "DPoP " .. token
    local line_number = 0
    for line in io.lines(file) do
        if line_number % nthreads == index then proofs[#proofs + 1] = line end
        line_number = line_number + 1
    end
end

function request()
    -- Past the end: the last proof again, which the gateway refuses as a replay (counted as non-2xx).
    local proof = proofs[next_proof] or proofs[#proofs]
    next_proof = next_proof + 1
    return wrk.format(nil, nil, {["Authorization"] = authorization, ["DPoP"] = proof})
end
