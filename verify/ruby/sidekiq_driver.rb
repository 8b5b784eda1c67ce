# Drive Sidekiq's real retry code for retrykit's verify module.
#
# Reads one JSON request on stdin:
#   {"cases": [{"op": "delay", "attempt": N, "rand": R}, {"op": "decision", "attempt": N}, ...]}
# and writes one JSON answer on stdout:
#   {"system": "sidekiq", "version": "...", "file": "...", "results": [...]}
#
# "delay" calls Sidekiq::JobRetry#delay_for (no worker, so no sidekiq_retry_in
# block) with count = attempt - 1, the retry_count Sidekiq stores after that
# failure. Kernel#rand is replaced on that JobRetry object by a method that
# returns floor(R * n) for rand(n) and records n, so the draw is injected.
#
# A "decision" case may carry "retry" (the job's sidekiq_options retry: an
# integer, true or false) for a configured profile.
#
# "decision" runs JobRetry#attempt_retry (JobRetry#global when retry is false) on a job hash whose previous
# retry_count makes this failure attempt N, against a fake Redis connection
# that records commands: a ZADD to "retry" means Sidekiq scheduled a retry, a
# ZADD to "dead" means it gave up and moved the job to the Dead set.
require "json"
require "logger"
require "sidekiq"
require "sidekiq/job_retry"

Sidekiq.logger = Logger.new($stderr, level: Logger::WARN)

# Records the Redis commands Sidekiq sends; MULTI yields itself.
class RecordingRedis
  attr_reader :commands

  def initialize
    @commands = []
  end

  def multi
    yield self
  end

  def method_missing(name, *args)
    @commands << [name.to_s, *args.map(&:to_s)]
    0
  end

  def respond_to_missing?(_name, _include_private = false)
    true
  end
end

def with_redis(conn)
  saved = Sidekiq.method(:redis)
  Sidekiq.define_singleton_method(:redis) { |&blk| blk.call(conn) }
  yield
ensure
  Sidekiq.define_singleton_method(:redis, saved)
end

def injected(retrier, r)
  calls = []
  retrier.define_singleton_method(:rand) do |n = nil|
    raise ArgumentError, "unexpected rand without a bound" if n.nil?
    calls << n
    (r * n).floor
  end
  calls
end

def delay(attempt, r)
  retrier = Sidekiq::JobRetry.new
  calls = injected(retrier, r)
  seconds = retrier.send(:delay_for, nil, attempt - 1, RuntimeError.new("retrykit verify"))
  {"delay_s" => seconds, "rand" => calls}
end

def decision(attempt, retry_opt = true)
  retrier = Sidekiq::JobRetry.new
  injected(retrier, 0.0)
  msg = {"class" => "RetrykitVerifyJob", "jid" => "retrykit-verify", "args" => [], "retry" => retry_opt, "queue" => "default"}
  msg["retry_count"] = attempt - 2 if attempt > 1
  conn = RecordingRedis.new
  with_redis(conn) do
    if retry_opt == false
      # JobRetry#global, the server middleware, reads retry: false and
      # gives up without attempt_retry (death handlers only).
      begin
        retrier.global(Sidekiq.dump_json(msg), "default") { raise RuntimeError, "retrykit verify" }
      rescue Sidekiq::JobRetry::Handled
        nil
      end
    else
      retrier.send(:attempt_retry, nil, msg, "default", RuntimeError.new("retrykit verify"))
    end
  end
  sets = conn.commands.select { |c| c[0] == "zadd" }.map { |c| c[1] }
  {"retry" => sets.include?("retry"), "dead" => sets.include?("dead"), "retry_count" => msg["retry_count"]}
end

request = JSON.parse($stdin.read)
results = request.fetch("cases").map do |c|
  case c.fetch("op")
  when "delay" then delay(Integer(c.fetch("attempt")), Float(c.fetch("rand")))
  when "decision" then decision(Integer(c.fetch("attempt")), c.fetch("retry", true))
  else abort "sidekiq_driver: unknown op #{c["op"].inspect}"
  end
end
$stdout.write(JSON.generate({
  "system" => "sidekiq",
  "version" => Sidekiq::VERSION,
  "file" => Sidekiq::JobRetry.instance_method(:delay_for).source_location.first,
  "results" => results
}))
