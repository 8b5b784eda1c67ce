# Drive resque-retry's real Resque::Plugins::ExponentialBackoff (and the
# Resque::Plugins::Retry it includes) for retrykit's verify module.
#
# Run with -I SRC/lib, SRC a checkout of github.com/lantins/resque-retry.
# Reads one JSON request on stdin:
#   {"config": {"retry_limit": N, "backoff_strategy": [..],
#               "retry_delay_multiplicand_min": F, "retry_delay_multiplicand_max": F},
#    "cases": [{"op": "delay", "attempt": N, "rand": R}, {"op": "runs", "cap": N}]}
# and writes {"system", "version", "file", "results"} on stdout.
#
# Resque itself (and resque-scheduler) are stood in for by the smallest
# module the plugin calls: an in-memory Redis for the retry counter and
# enqueue methods that record the delay. The plugin's own hooks do the
# rest: before_perform_retry counts the attempt, on_failure_retry decides
# (retry_limit_reached?, retry_criteria_valid?) and either try_again
# (retry_delay, then enqueue) or give_up. "rand" R (in [0, 1], both ends)
# is injected as the job class's rand: rand(a..b) answers a + R * (b - a),
# and the driver records every range it was called with.
require "json"

# The Redis commands resque-retry sends, in memory.
class RetrykitRedis
  def initialize
    @h = {}
  end

  def setnx(k, v)
    return false if @h.key?(k)
    @h[k] = v.to_s
    true
  end

  def incr(k)
    @h[k] = (@h[k].to_i + 1).to_s
    @h[k].to_i
  end

  def decr(k)
    @h[k] = (@h[k].to_i - 1).to_s
    @h[k].to_i
  end

  def get(k)
    @h[k]
  end

  def del(k)
    @h.delete(k) ? 1 : 0
  end

  def expire(_k, _s); end
end

module Resque
  class DirtyExit < StandardError; end

  class << self
    attr_accessor :redis, :enqueued

    def logger; end

    def inline?
      false
    end

    def queue_from_class(_klass)
      "retrykit"
    end

    def enqueue_to(_queue, _klass, *_args)
      @enqueued << 0
    end

    def enqueue_in_with_queue(_queue, delay, _klass, *_args)
      @enqueued << delay
    end
  end
end

require "resque/plugins/retry"
require "resque/plugins/exponential_backoff"

class RetrykitFailure < StandardError; end

request = JSON.parse($stdin.read)
config = request["config"] || {}

# job builds a fresh job class configured as a user would: instance
# variables set before `extend`, as resque-retry's README shows.
def job(config, draw, calls)
  klass = Class.new
  klass.define_singleton_method(:name) { "RetrykitJob" }
  klass.instance_variable_set(:@retry_limit, config["retry_limit"]) if config.key?("retry_limit")
  klass.instance_variable_set(:@backoff_strategy, config["backoff_strategy"]) if config.key?("backoff_strategy")
  %w[retry_delay_multiplicand_min retry_delay_multiplicand_max].each do |k|
    klass.instance_variable_set(:"@#{k}", Float(config[k])) if config.key?(k)
  end
  klass.define_singleton_method(:rand) do |range|
    calls << [range.begin, range.end, range.exclude_end?]
    range.begin + draw * (range.end - range.begin)
  end
  klass.extend(Resque::Plugins::ExponentialBackoff)
  klass
end

# fail_once runs one attempt that raises, through the plugin's hooks, and
# answers the delay it enqueued, or nil when it gave up.
def fail_once(klass)
  before = Resque.enqueued.length
  klass.before_perform_retry
  klass.on_failure_retry(RetrykitFailure.new("retrykit verify"))
  Resque.enqueued.length > before ? Resque.enqueued.last : nil
end

results = request.fetch("cases").map do |c|
  Resque.redis = RetrykitRedis.new
  Resque.enqueued = []
  calls = []
  case c.fetch("op")
  when "delay"
    klass = job(config, Float(c.fetch("rand")), calls)
    delay = nil
    Integer(c.fetch("attempt")).times { delay = fail_once(klass) }
    {"retry" => !delay.nil?, "delay_s" => delay, "rand_calls" => calls}
  when "runs"
    klass = job(config, 0.0, calls)
    cap = Integer(c.fetch("cap"))
    runs = 0
    loop do
      runs += 1
      break if fail_once(klass).nil? || runs >= cap
    end
    {"runs" => runs, "gave_up" => Resque.redis.get(klass.redis_retry_key).nil?}
  else
    abort "resque_retry_driver: unknown op #{c["op"].inspect}"
  end
end
version = begin
  require "resque-retry/version"
  ResqueRetry::VERSION
rescue LoadError
  ""
end
$stdout.write(JSON.generate({
  "system" => "resque-retry",
  "version" => version,
  "file" => Resque::Plugins::ExponentialBackoff.instance_method(:retry_delay).source_location.first,
  "results" => results
}))
