# Drive Delayed::Job's real Worker#reschedule for retrykit's verify module.
#
# Reads one JSON request on stdin:
#   {"config": {"max_attempts": N, "destroy_failed_jobs": B},
#    "cases": [{"op": "delay", "attempt": N}, {"op": "runs"}]}
# and writes {"system", "version", "file", "results"} on stdout.
#
# A job class including Delayed::Backend::Base (the real reschedule_at,
# max_attempts, destroy_failed_jobs? and fail!) keeps its record in memory,
# with db_time_now fixed. A real Delayed::Worker reschedules it after each
# failure: "delay" answers run_at - db_time_now after the N-th failure;
# "runs" counts the failures until the worker fails the job, and says
# whether it was destroyed or kept with failed_at.
require "json"
require "logger"
require "delayed_job"

NOW = Time.at(1_700_000_000)

class RetrykitPayload
  def perform; end
end

class RetrykitJob
  include Delayed::Backend::Base
  attr_accessor :id, :attempts, :run_at, :failed_at, :handler, :queue, :locked_at, :locked_by, :last_error, :priority
  attr_reader :destroyed

  def self.db_time_now
    NOW
  end

  def initialize
    @attempts = 0
    self.payload_object = RetrykitPayload.new
  end

  def save!; end
  def unlock; end

  def destroy
    @destroyed = true
  end
end

request = JSON.parse($stdin.read)
config = request["config"] || {}
Delayed::Worker.max_attempts = config["max_attempts"] if config["max_attempts"]
Delayed::Worker.destroy_failed_jobs = config["destroy_failed_jobs"] unless config["destroy_failed_jobs"].nil?
Delayed::Worker.logger = Logger.new(IO::NULL)
worker = Delayed::Worker.new(quiet: true)

results = request.fetch("cases").map do |c|
  job = RetrykitJob.new
  case c.fetch("op")
  when "delay"
    Integer(c.fetch("attempt")).times { worker.reschedule(job) }
    {"delay_s" => job.run_at - NOW, "attempts" => job.attempts}
  when "runs"
    runs = 0
    loop do
      runs += 1
      worker.reschedule(job)
      break if job.failed_at || job.destroyed || runs > 100_000
    end
    {"runs" => runs, "destroyed" => !!job.destroyed, "failed_at" => !job.failed_at.nil?}
  else
    abort "delayed_job_driver: unknown op #{c["op"].inspect}"
  end
end
$stdout.write(JSON.generate({
  "system" => "delayed_job",
  "version" => Gem.loaded_specs["delayed_job"]&.version.to_s,
  "file" => Delayed::Worker.instance_method(:reschedule).source_location.first,
  "results" => results
}))
