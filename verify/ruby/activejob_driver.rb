# Drive Active Job's real retry_on code for retrykit's verify module.
#
# Reads one JSON request on stdin:
#   {"cases": [{"op": "delay", "attempt": N, "rand": R}, {"op": "decision", "attempt": N},
#              {"op": "attempts_runs", "attempts": N, "cap": C}, ...]}
# and writes one JSON answer on stdout:
#   {"system": "activejob", "version": "...", "algorithm": "...", "results": [...]}
#
# The job class declares `retry_on RetrykitVerifyError, wait: ALGORITHM` with
# the default attempts, where ALGORITHM is :polynomially_longer (Rails 7.1+)
# or :exponentially_longer, its name before 7.1 (the same formula). Its
# retry_jitter is set to 0.15, the value config.active_job.retry_jitter gets
# from Rails' load_defaults 6.1 and later (the bare class attribute is 0.0).
#
# "delay" calls the job's determine_delay with executions = attempt, as the
# retry_on handler does after that failure. Kernel.rand is replaced by a method
# returning R (and counting its calls), so the draw is injected. The delay is
# returned as the Float number of seconds Active Job computed.
#
# "decision" performs the job ATTEMPT times on the test adapter (each perform
# raises) and reports whether the last failure re-enqueued the job (retry) or
# re-raised the error (retries exhausted).
require "json"
require "logger"
require "active_job"

ActiveJob::Base.logger = Logger.new(IO::NULL) # perform_now logs every failure with its backtrace
ActiveJob::Base.queue_adapter = :test

class RetrykitVerifyError < StandardError; end

ALGORITHM = ActiveJob.gem_version >= Gem::Version.new("7.1") ? :polynomially_longer : :exponentially_longer

class RetrykitVerifyJob < ActiveJob::Base
  self.retry_jitter = 0.15
  retry_on RetrykitVerifyError, wait: ALGORITHM

  def perform
    raise RetrykitVerifyError, "retrykit verify"
  end
end

def with_rand(r)
  calls = 0
  saved = Kernel.method(:rand)
  Kernel.define_singleton_method(:rand) do |*args|
    raise ArgumentError, "unexpected Kernel.rand arguments #{args.inspect}" unless args.empty?
    calls += 1
    r
  end
  value = yield
  [value, calls]
ensure
  Kernel.define_singleton_method(:rand, saved)
end

def delay(attempt, r)
  job = RetrykitVerifyJob.new
  seconds, calls = with_rand(r) do
    job.send(:determine_delay, seconds_or_duration_or_algorithm: ALGORITHM, executions: attempt)
  end
  {"delay_s" => seconds.to_f, "rand_calls" => calls}
end

def decision(attempt)
  adapter = ActiveJob::Base.queue_adapter
  job = RetrykitVerifyJob.new
  outcome = nil
  with_rand(0.0) do
    attempt.times do
      adapter.enqueued_jobs.clear
      begin
        job.perform_now
        outcome = adapter.enqueued_jobs.size == 1 ? "retry" : "none"
      rescue RetrykitVerifyError
        outcome = "raised"
      end
      break if outcome != "retry"
    end
  end
  {"retry" => outcome == "retry", "outcome" => outcome, "executions" => job.executions}
end

# A job with retry_on's own defaults (wait: 3.seconds, attempts: 5) and the
# bare class attribute retry_jitter (0.0 without load_defaults 6.1).
class RetrykitDefaultJob < ActiveJob::Base
  retry_on RetrykitVerifyError

  def perform
    raise RetrykitVerifyError, "retrykit verify"
  end
end

# "default_wait" performs RetrykitDefaultJob once on the test adapter and
# reports the wait of the retry it enqueued, bracketed by the clock reads
# around the perform, and the class's retry_jitter.
def default_wait
  adapter = ActiveJob::Base.queue_adapter
  adapter.enqueued_jobs.clear
  before = Time.now.to_f
  RetrykitDefaultJob.new.perform_now
  after = Time.now.to_f
  at = adapter.enqueued_jobs.first.fetch(:at)
  {"wait_min_s" => at - after, "wait_max_s" => at - before, "retry_jitter" => RetrykitDefaultJob.retry_jitter}
end

# "wait_delay" computes determine_delay for wait: W.seconds (a Duration)
# with jitter J and Kernel.rand injected; "float_wait" tries a plain Float
# wait and reports whether Active Job raised.
def wait_delay(attempt, r, wait, jitter)
  job = RetrykitVerifyJob.new
  seconds, calls = with_rand(r) do
    job.send(:determine_delay, seconds_or_duration_or_algorithm: wait.seconds, executions: attempt, jitter: jitter)
  end
  {"delay_s" => seconds.to_f, "rand_calls" => calls}
end

def float_wait(wait)
  RetrykitVerifyJob.new.send(:determine_delay, seconds_or_duration_or_algorithm: wait, executions: 1, jitter: 0.15)
  {"raised" => false}
rescue RuntimeError => e
  {"raised" => true, "message" => e.message}
end

# "attempts_runs" declares retry_on with attempts: N (wait: 0) and performs
# the job until retry_on re-raises instead of re-enqueuing, at most CAP
# times, and reports how many runs that took.
def attempts_runs(attempts, cap)
  klass = Class.new(ActiveJob::Base) do
    def self.name
      "RetrykitAttemptsJob"
    end
    retry_on RetrykitVerifyError, attempts: attempts, wait: 0

    def perform
      raise RetrykitVerifyError, "retrykit verify"
    end
  end
  adapter = ActiveJob::Base.queue_adapter
  job = klass.new
  runs = 0
  with_rand(0.0) do
    loop do
      runs += 1
      adapter.enqueued_jobs.clear
      begin
        job.perform_now
      rescue RetrykitVerifyError
        break
      end
      break if adapter.enqueued_jobs.size != 1 || runs >= cap
    end
  end
  {"runs" => runs}
end

request = JSON.parse($stdin.read)
results = request.fetch("cases").map do |c|
  case c.fetch("op")
  when "delay" then delay(Integer(c.fetch("attempt")), Float(c.fetch("rand")))
  when "decision" then decision(Integer(c.fetch("attempt")))
  when "default_wait" then default_wait
  when "wait_delay" then wait_delay(Integer(c.fetch("attempt")), Float(c.fetch("rand")), Float(c.fetch("wait")), Float(c.fetch("jitter")))
  when "float_wait" then float_wait(Float(c.fetch("wait")))
  when "attempts_runs" then attempts_runs(Integer(c.fetch("attempts")), Integer(c.fetch("cap")))
  else abort "activejob_driver: unknown op #{c["op"].inspect}"
  end
end
$stdout.write(JSON.generate({
  "system" => "activejob",
  "version" => ActiveJob.gem_version.to_s,
  "algorithm" => ALGORITHM.to_s,
  "file" => ActiveJob::Exceptions.instance_method(:retry_job).source_location.first,
  "results" => results
}))
