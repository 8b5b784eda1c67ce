#!/usr/bin/env ruby
# frozen_string_literal: true

# Conformance adapter (conformance/PROTOCOL.md, protocol 1) for the retry
# policy of the official OJS Ruby SDK (github.com/openjobspec/ojs-ruby-sdk,
# lib/ojs/retry_policy.rb), for the scoreboard.
#
#     ruby ojs_ruby_sdk.rb SDK_DIR
#
# SDK_DIR is a checkout of the SDK; only lib/ojs/retry_policy.rb is loaded
# (it needs nothing beyond Ruby's core). The adapter answers the ops the
# class implements and adds no logic of its own beyond unit conversion
# (seconds to nanoseconds, rounded to the nearest):
#
#   parse_duration  RetryPolicy.parse_duration(value)
#   validate        RetryPolicy.from_hash(policy), its seven attributes
#   delay           RetryPolicy.from_hash(policy).compute_delay(attempt), with
#                   the policy's rand(0.5..1.5) drawn as 0.5 + rand
#                   (jitter injectable)
#   match           RetryPolicy.new(non_retryable_errors: patterns).non_retryable?(error_type)

require "json"

abort "usage: ojs_ruby_sdk.rb SDK_DIR" unless ARGV.length == 1
load File.join(ARGV[0], "lib", "ojs", "retry_policy.rb")

def invalid(msg)
  { "error" => { "type" => "validation.retry_policy_invalid", "message" => msg } }
end

def policy_of(req)
  p = req.key?("policy") ? req["policy"] : {}
  p = {} if p.nil?
  raise TypeError, "policy is not an object" unless p.is_a?(Hash)

  OJS::RetryPolicy.from_hash(p)
end

def answer(req)
  case req["op"]
  when "hello"
    { "protocol" => 1, "implementation" => "ojs-ruby-sdk", "version" => "0.4.0",
      "ops" => %w[parse_duration validate delay match], "resolution_ns" => 1, "jitter" => "injectable",
      # retrykit's backoff_strategy extension is not the SDK's
      "unclaimed_flags" => ["extension:backoff_strategy"] }
  when "parse_duration"
    v = req["value"]
    return invalid("value is not a string") unless v.is_a?(String)

    { "ns" => (OJS::RetryPolicy.parse_duration(v) * 1e9).round }
  when "validate"
    p = policy_of(req)
    { "effective" => { "max_attempts" => p.max_attempts, "initial_interval" => p.initial_interval,
                       "backoff_coefficient" => p.backoff_coefficient, "max_interval" => p.max_interval,
                       "jitter" => p.jitter, "non_retryable_errors" => p.non_retryable_errors,
                       "on_exhaustion" => p.on_exhaustion } }
  when "delay"
    if req.key?("profile")
      return { "error" => { "type" => "validation.invalid_request", "message" => "no profiles" } }
    end

    p = policy_of(req)
    a = req["attempt"]
    unless a.is_a?(Integer) && a >= 1
      return { "error" => { "type" => "validation.invalid_request", "message" => "attempt must be an integer >= 1" } }
    end

    r = req.fetch("rand", 0.5)
    p.define_singleton_method(:rand) { |range| range.begin + r * (range.end - range.begin) }
    { "delay_ns" => (p.compute_delay(a) * 1e9).round }
  when "match"
    pats, type = req["patterns"], req["error_type"]
    unless pats.is_a?(Array) && type.is_a?(String)
      return { "error" => { "type" => "validation.invalid_request", "message" => "patterns and error_type" } }
    end

    { "match" => OJS::RetryPolicy.new(non_retryable_errors: pats).non_retryable?(type) }
  else
    { "unsupported" => true }
  end
rescue ArgumentError, TypeError, NoMethodError, FloatDomainError, ZeroDivisionError => e
  invalid(e.message)
end

$stdout.sync = true
$stdin.each_line do |line|
  req = begin
    JSON.parse(line)
  rescue JSON::ParserError
    nil
  end
  unless req.is_a?(Hash)
    puts JSON.generate({ "id" => nil, "error" => { "type" => "validation.invalid_request", "message" => "not a JSON object" } })
    next
  end
  out = { "id" => req["id"] }.merge(answer(req))
  begin
    puts JSON.generate(out)
  rescue JSON::GeneratorError, Encoding::UndefinedConversionError
    # the SDK kept a number JSON cannot hold (Infinity, NaN)
    puts JSON.generate({ "id" => req["id"], "error" => { "type" => "adapter.unencodable", "message" => "the SDK's answer holds a non-finite number" } })
  end
end
