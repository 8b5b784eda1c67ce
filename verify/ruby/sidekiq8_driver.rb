# Drive Sidekiq 8's real retry scheduling from its public source, for
# retrykit's verify module (TestSidekiq8Source).
#
# Sidekiq 8 is not installable here: rubygems is not reachable, Debian ships
# 6.4.1, and sidekiq.rb refuses Debian's Ruby 3.1. Its retry code does not
# need the rest, so this driver loads lib/sidekiq/component.rb and
# lib/sidekiq/job_retry.rb from a source tree given with -I (a checkout of
# github.com/sidekiq/sidekiq at a v8 tag) on a stub configuration.
#
# Reads {"cases": [{"attempt": N, "rand": R, "retry": RETRY?}, ...]} and, per
# case, runs JobRetry#process_retry on a job whose previous retry_count makes
# this failure attempt N, with Kernel#rand replaced by floor(R * n) on that
# object and a Redis connection that records commands. The answer says
# whether Sidekiq scheduled a retry (ZADD "retry": its score minus the clock
# read before and after the call brackets the delay) or called
# retries_exhausted.
require "json"
require "logger"

module Sidekiq
  def self.default_configuration
    @default_configuration ||= {max_retries: nil, backtrace_cleaner: ->(bt) { bt }}
  end

  def self.dump_json(x)
    JSON.generate(x)
  end

  def self.logger
    Logger.new(nil)
  end
end
require "sidekiq/version"
require "sidekiq/component"
require "sidekiq/job_retry"

# Records the Redis commands Sidekiq sends.
class RecordingRedis
  attr_reader :commands

  def initialize
    @commands = []
  end

  def method_missing(name, *args)
    @commands << [name.to_s, *args.map(&:to_s)]
    0
  end

  def respond_to_missing?(_name, _include_private = false)
    true
  end
end

# The configuration JobRetry reads through Sidekiq::Component.
class StubConfig
  attr_accessor :conn

  def redis
    yield @conn
  end

  def logger
    Logger.new(nil)
  end

  def [](_key)
    nil
  end
end

results = JSON.parse($stdin.read)["cases"].map do |c|
  n = c["attempt"]
  r = c["rand"]
  cfg = StubConfig.new
  cfg.conn = RecordingRedis.new
  retrier = Sidekiq::JobRetry.new(cfg)
  draws = []
  retrier.define_singleton_method(:rand) { |k| draws << k; (r * k).floor }
  exhausted = false
  retrier.define_singleton_method(:retries_exhausted) { |*| exhausted = true }
  msg = {"class" => "RetrykitVerify", "jid" => "j", "queue" => "default", "retry" => c.key?("retry") ? c["retry"] : true}
  if n >= 2
    msg["retry_count"] = n - 2
    msg["failed_at"] = 0
  end
  before = Time.now.to_f
  retrier.send(:process_retry, nil, msg, "default", RuntimeError.new("retrykit verify"))
  after = Time.now.to_f
  zadd = cfg.conn.commands.find { |cmd| cmd[0] == "zadd" && cmd[1] == "retry" }
  if zadd
    at = zadd[2].to_f
    {"retry" => true, "min_s" => at - after, "max_s" => at - before, "rand" => draws}
  else
    {"retry" => false, "exhausted" => exhausted}
  end
end
puts JSON.generate({"system" => "sidekiq", "version" => Sidekiq::VERSION, "file" => $LOADED_FEATURES.grep(/job_retry/).first, "results" => results})
