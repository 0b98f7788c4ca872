package server

import "idemlab/classroom"

// classroomConfig is the live classroom's configuration: opts.Classroom
// with the server's own options in place of its fields.
func classroomConfig(opts Options) classroom.Config {
	cfg := opts.Classroom
	cfg.InstructorToken = opts.InstructorToken
	cfg.RotateToken = opts.RotateToken
	cfg.ListenAddr = opts.ListenAddr
	cfg.PublicURL = opts.PublicURL
	cfg.DB = opts.DB
	cfg.Logger = opts.Logger
	return cfg
}

// InstructorPath returns the path (with a one-time sign-in code in its
// fragment) that opens the classroom's projector as the instructor. Print
// it once, at start-up; nothing else shows or logs it.
func (s *Server) InstructorPath() string { return s.classroom.InstructorPath() }

// GeneratedInstructorSecret is the classroom's secret when this start made
// it (none was given, none was kept beside the database): print it once.
// Otherwise it is "".
func (s *Server) GeneratedInstructorSecret() string { return s.classroom.GeneratedToken() }
